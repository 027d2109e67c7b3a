/**
 * Runs on the PyTorch engine (`engine.kind: torch`): the trainer, the rollout generator and the evaluator are torch
 * worker processes, and weights pass between them as checkpoint directories.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { torchPython } from "@arc/engine";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { parseRecipe } from "../recipe/index.ts";
import { engineFactory } from "../worker/index.ts";
import { assertStalenessUpToOne } from "./__fixtures__/bounded-staleness.ts";
import { writeTinyModel } from "./__fixtures__/tiny-model.ts";
import { startRun } from "./run-training.ts";
import type { StepRecord } from "./run-types.ts";

const rewardModule = fileURLToPath(new URL("./__fixtures__/digit-reward.ts", import.meta.url));
const skip = skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "peft"]));

const mean = (records: StepRecord[]) => records.reduce((a, r) => a + (r.reward ?? 0), 0) / records.length;

describe("runs on the torch engine", { skip }, () => {
  it("improves the reward of a tiny environment with semi-online DPO, evaluates, and checkpoints torch state", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-torch-run-"));
    const recipe = parseRecipe({
      name: "tiny-torch",
      model: { path: await writeTinyModel(join(root, "model")) },
      engine: { kind: "torch", device: "cpu" },
      data: { env: "toolcall", split: "train", count: 32, evalCount: 8 },
      trainer: {
        algorithm: "dpo",
        steps: 16,
        promptsPerStep: 4,
        samplesPerPrompt: 4,
        learningRate: 1e-2,
        maxTokens: 8,
        syncInterval: 2,
        checkpointEvery: 8,
        evalEvery: 8,
      },
      reward: { module: rewardModule },
    });
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    const first = mean(steps.slice(0, 4));
    const last = mean(steps.slice(-4));
    assert.ok(last > first + 0.1, `reward went from ${first.toFixed(3)} to ${last.toFixed(3)}`);
    assert.ok(
      steps.filter((r) => r.evalFailureRate !== undefined).length >= 2,
      "evaluated at steps 8 and 16",
    );
    const state = JSON.parse(
      await readFile(join(result.dir, "checkpoints/step-16/trainer_state.json"), "utf8"),
    );
    assert.equal(state.engine, "torch");
    assert.equal(state.step, 16);
  });

  it("trains GRPO with LoRA adapters", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-torch-run-"));
    const recipe = parseRecipe({
      name: "tiny-torch-lora",
      model: { path: await writeTinyModel(join(root, "model")) },
      engine: {
        kind: "torch",
        device: "cpu",
        lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "up_proj"] },
      },
      data: { env: "toolcall", split: "train", count: 16, evalCount: 0 },
      trainer: {
        algorithm: "grpo",
        steps: 3,
        promptsPerStep: 2,
        samplesPerPrompt: 4,
        maxTokens: 8,
        klCoef: 0.05,
      },
      reward: { module: rewardModule },
    });
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    assert.equal(result.status, "completed");
    const adapter = JSON.parse(
      await readFile(join(result.dir, "checkpoints/step-3/adapter/adapter_config.json"), "utf8"),
    );
    assert.equal(adapter.r, 4);
    assert.deepEqual([...adapter.target_modules].sort(), ["q_proj", "up_proj", "v_proj"]);
  });

  it("trains decoupled GRPO on asynchronous rollouts from the torch generator, none staler than maxStaleness", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-torch-run-"));
    const recipe = parseRecipe({
      name: "tiny-torch-async",
      model: { path: await writeTinyModel(join(root, "model")) },
      engine: { kind: "torch", device: "cpu" },
      data: { env: "toolcall", split: "train", count: 32, evalCount: 0 },
      trainer: {
        algorithm: "grpo",
        steps: 10,
        promptsPerStep: 4,
        samplesPerPrompt: 4,
        learningRate: 2e-2,
        maxTokens: 8,
        asyncRollouts: true,
        maxStaleness: 1,
        decoupled: true,
      },
      reward: { module: rewardModule },
    });
    // no asyncSource factory: the torch generator is a process of its own, and needs no worker thread
    const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
    assert.equal(result.status, "completed");
    const steps = result.records.filter((r) => r.step > 0);
    assert.equal(steps.length, 10);
    assertStalenessUpToOne(steps);
    assert.ok(mean(steps.slice(-3)) > mean(steps.slice(0, 3)), "reward did not improve");
  });
});
