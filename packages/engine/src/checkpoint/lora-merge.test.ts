import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { renderChatExample } from "../tokenizer/chat-template.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import { CheckpointError } from "./checkpoint-error.ts";
import { readHfCheckpoint, writeHfCheckpoint } from "./hf-checkpoint.ts";
import { mergeLoraCheckpoint } from "./lora-merge.ts";

describe("mergeLoraCheckpoint", () => {
  it("merges a PEFT adapter into its base as Arc's own LoRA export merges it, and keeps the adapter", async () => {
    const config = configForSize("tiny");
    const base = await mkdtemp(join(tmpdir(), "arc-lora-base-"));
    await writeHfCheckpoint(base, config, initWeights(config, 5));
    const engine = await EmbeddedTrainEngine.fromCheckpoint(base, {
      learningRate: 0.05,
      lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj"] },
    });
    const rows = generateToolcallTasks({ split: "train", seed: 3, count: 4 }).map((task) =>
      renderChatExample(toolcallFamily.prompt(task), toolcallFamily.reference(task)[0]),
    );
    for (let step = 0; step < 3; step++)
      await engine.step(
        { promptTokens: rows.map((r) => r.promptTokens), outputTokens: rows.map((r) => r.outputTokens) },
        { kind: "sft" },
      );
    const saved = await mkdtemp(join(tmpdir(), "arc-lora-saved-"));
    await engine.save(saved);
    await engine.close();

    const out = join(await mkdtemp(join(tmpdir(), "arc-lora-merged-")), "model");
    await mergeLoraCheckpoint(base, join(saved, "adapter"), out);
    const [merged, exported, original] = await Promise.all([out, saved, base].map(readHfCheckpoint));
    let largest = 0;
    let moved = 0;
    for (const [name, tensor] of exported.tensors) {
      const got = merged.tensors.get(name)?.data as Float32Array;
      const before = original.tensors.get(name)?.data as Float32Array;
      tensor.data.forEach((x, i) => {
        largest = Math.max(largest, Math.abs(x - got[i]));
        moved = Math.max(moved, Math.abs(x - before[i]));
      });
    }
    assert.ok(largest < 1e-6, `merged weights differ from the export by ${largest}`);
    assert.ok(moved > 1e-4, `the adapter moved the weights (${moved})`);
    assert.ok(existsSync(join(out, "adapter", "adapter_config.json")));
  });

  it("names the folder that holds no adapter", async () => {
    const base = await mkdtemp(join(tmpdir(), "arc-lora-none-"));
    await assert.rejects(
      mergeLoraCheckpoint(base, join(base, "lora_adapter"), join(base, "out")),
      (error) =>
        error instanceof CheckpointError && /lora_adapter: no adapter_config\.json/.test(error.message),
    );
  });
});
