/**
 * LoRA adapters that both engines export load in PEFT onto the base model they were trained from, and give the
 * merged checkpoint's logits (checked with PEFT and transformers in the project's Python).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { TrainBatch, TrainEngine } from "@arc/core";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { writeHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { renderChatExample } from "../tokenizer/chat-template.ts";
import { torchUnavailable } from "../torch/__fixtures__/torch-available.ts";
import { TorchTrainEngine } from "../torch/torch-train-engine.ts";
import { torchPython } from "../torch/torch-worker.ts";
import { EmbeddedTrainEngine } from "./embedded-train-engine.ts";

const CHECK = fileURLToPath(new URL("./__fixtures__/peft_adapter_logits.py", import.meta.url));
const LORA = {
  rank: 4,
  alpha: 8,
  targets: ["q_proj", "v_proj", "up_proj"] as ("q_proj" | "v_proj" | "up_proj")[],
};

function batch(): TrainBatch {
  const rows = generateToolcallTasks({ split: "train", seed: 4, count: 6 }).map((task) =>
    renderChatExample(toolcallFamily.prompt(task), toolcallFamily.reference(task)[0]),
  );
  return { promptTokens: rows.map((r) => r.promptTokens), outputTokens: rows.map((r) => r.outputTokens) };
}

/** Trains `engine` a few steps and saves it; returns the saved checkpoint (its adapter in `adapter/`). */
async function trainAndSave(engine: TrainEngine): Promise<string> {
  for (let s = 0; s < 3; s++) await engine.step(batch(), { kind: "sft" });
  const saved = await mkdtemp(join(tmpdir(), "arc-peft-saved-"));
  await engine.save(saved);
  await engine.close?.();
  return saved;
}

describe("LoRA adapters in PEFT's layout", { skip: torchUnavailable() }, () => {
  it("loads both engines' adapters in PEFT, with the merged checkpoints' logits", async () => {
    const layers = configForSize("tiny").num_hidden_layers;
    const base = await mkdtemp(join(tmpdir(), "arc-peft-base-"));
    const config = configForSize("tiny");
    await writeHfCheckpoint(base, config, initWeights(config, 9));
    const settings = { learningRate: 0.05, lora: LORA };
    const saved = [
      await trainAndSave(await EmbeddedTrainEngine.fromCheckpoint(base, settings)),
      await trainAndSave(await TorchTrainEngine.fromCheckpoint(base, { ...settings, device: "cpu" })),
    ];
    // one Python process for both: importing torch and PEFT is most of its time
    const run = spawnSync(
      torchPython(),
      [CHECK, ...saved.flatMap((dir) => [base, join(dir, "adapter"), dir])],
      {
        encoding: "utf8",
      },
    );
    assert.equal(run.status, 0, run.stderr);
    const checks = JSON.parse(run.stdout.trim().split("\n").pop() as string);
    for (const [i, kind] of ["embedded", "torch"].entries()) {
      const { maxAbsDiff, baseGap, adapted } = checks[i];
      assert.equal(adapted.length, layers * 3, `${kind}: ${adapted.join(", ")}`);
      assert.ok(baseGap > 1e-2, `${kind}: the adapter moves the logits by only ${baseGap}`);
      assert.ok(
        maxAbsDiff < 1e-4,
        `${kind}: PEFT's logits differ from the merged checkpoint's by up to ${maxAbsDiff}`,
      );
    }
  });
});
