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
import { generateToolcallTasks, type TrainBatch, type TrainEngine, toolcallFamily } from "@arc/core";
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

/** Trains `engine` a few steps, saves it, and has PEFT load the adapter onto `base` beside the merged weights. */
async function peftCheck(
  engine: TrainEngine,
  base: string,
): Promise<{ maxAbsDiff: number; baseGap: number; adapted: string[] }> {
  for (let s = 0; s < 3; s++) await engine.step(batch(), { kind: "sft" });
  const saved = await mkdtemp(join(tmpdir(), "arc-peft-saved-"));
  await engine.save(saved);
  await engine.close?.();
  const run = spawnSync(torchPython(), [CHECK, base, join(saved, "adapter"), saved], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim().split("\n").pop() as string);
}

describe("LoRA adapters in PEFT's layout", { skip: torchUnavailable() }, () => {
  const layers = configForSize("tiny").num_hidden_layers;

  for (const kind of ["embedded", "torch"] as const) {
    it(`loads the ${kind} engine's adapter in PEFT, with the merged checkpoint's logits`, async () => {
      const base = await mkdtemp(join(tmpdir(), "arc-peft-base-"));
      const config = configForSize("tiny");
      await writeHfCheckpoint(base, config, initWeights(config, 9));
      const settings = { learningRate: 0.05, lora: LORA };
      const engine =
        kind === "embedded"
          ? await EmbeddedTrainEngine.fromCheckpoint(base, settings)
          : await TorchTrainEngine.fromCheckpoint(base, { ...settings, device: "cpu" });
      const { maxAbsDiff, baseGap, adapted } = await peftCheck(engine, base);
      assert.equal(adapted.length, layers * 3, adapted.join(", "));
      assert.ok(baseGap > 1e-2, `the adapter moves the logits by only ${baseGap}`);
      assert.ok(
        maxAbsDiff < 1e-4,
        `PEFT's logits differ from the merged checkpoint's by up to ${maxAbsDiff}`,
      );
    });
  }
});
