/**
 * A run on a Ray cluster: a local Ray head (`ray start --head`, from the project's venv) takes the torch engine as an
 * actor; the run trains there, records its progress, stops when cancelled, and its checkpoint holds the torch state.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { TorchTrainEngine, torchPython } from "@arc/engine";
import { pythonLacks, rayLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import {
  type LocalRayHead,
  startLocalRayHead,
} from "../../../engine/src/jobs/__fixtures__/local-ray-head.ts";
import { parseRecipe } from "../recipe/index.ts";
import { engineFactory } from "../worker/index.ts";
import { writeTinyModel } from "./__fixtures__/tiny-model.ts";
import { startRun } from "./run-training.ts";
import type { StepRecord } from "./run-types.ts";

const skip =
  skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "peft"])) ||
  skipWithout("ray", rayLacks(torchPython()));

describe("runs on a Ray cluster", { skip }, () => {
  let head: LocalRayHead;
  let address: string;
  before(async () => {
    head = await startLocalRayHead({ cpus: 2 });
    address = head.address;
  });
  after(() => head?.stop());

  it("runs the engine as an actor on the cluster, with errors named as in a local worker", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-ray-engine-"));
    const model = await writeTinyModel(join(root, "model"));
    const engine = await TorchTrainEngine.fromCheckpoint(model, { device: "cpu", ray: { address, cpus: 1 } });
    try {
      assert.match(String((engine.info as unknown as { rayNode?: string }).rayNode), /^[0-9a-f]{16,}$/);
      await assert.rejects(
        engine.step({ promptTokens: [[1]], outputTokens: [[100_000]] }, { kind: "sft" }),
        (e: Error & { type?: string }) => e.type === "BatchError" && /100000/.test(e.message),
      );
    } finally {
      await engine.close();
    }
  });

  it("trains, records progress, stops when cancelled and checkpoints the torch state", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-ray-run-"));
    const recipe = parseRecipe({
      name: "tiny-ray",
      model: { path: await writeTinyModel(join(root, "model")) },
      engine: { kind: "torch", device: "cpu" },
      cluster: { address, cpusPerWorker: 1 },
      data: { env: "toolcall", split: "train", count: 64, evalCount: 0 },
      trainer: { algorithm: "sft", steps: 200, promptsPerStep: 4, learningRate: 1e-2, checkpointEvery: 5 },
    });
    const controller = new AbortController();
    const seen: StepRecord[] = [];
    const result = await startRun(recipe, {
      runsDir: join(root, "runs"),
      factory: engineFactory,
      signal: controller.signal,
      hooks: {
        onStep(record) {
          seen.push(record);
          if (record.step === 7) controller.abort();
        },
      },
    });
    assert.equal(result.status, "cancelled");
    assert.ok(seen.length >= 7 && seen.length < 200, `${seen.length} steps recorded`);
    assert.ok(seen.at(-1)!.loss! < seen[1].loss!, "the loss fell");
    assert.ok(result.lastCheckpoint, "a checkpoint when cancelled");
    const state = JSON.parse(
      await readFile(join(result.dir, result.lastCheckpoint!, "trainer_state.json"), "utf8"),
    );
    assert.equal(state.engine, "torch");
  });
});
