import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { initBackend } from "../backend/tf-backend.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize, type LlamaConfig } from "../model/llama-config.ts";
import { torchPython } from "../torch/torch-worker.ts";
import { forwardLogits } from "./__fixtures__/forward-logits.ts";
import { readHfCheckpoint, type WriteCheckpointOptions, writeHfCheckpoint } from "./hf-checkpoint.ts";

const script = join(import.meta.dirname, "../../scripts/hf_reference.py");
/** The project's Python, whose NumPy runs the independent implementation. */
const python = torchPython();
const noNumpy = skipWithout("python", pythonLacks(python, ["numpy"]));

const tokens = [256, 260, 72, 101, 108, 108, 111, 33, 263, 261, 200, 13, 7];

async function compare(config: LlamaConfig, options: WriteCheckpointOptions, tolerance: number) {
  const dir = await mkdtemp(join(tmpdir(), "arc-hfref-"));
  const weights = initWeights(config, 17);
  for (const t of weights.values())
    for (let i = 0; i < t.data.length; i++) t.data[i] *= t.data.length > 64 ? 5 : 1;
  await writeHfCheckpoint(dir, config, weights, options);
  const reference = JSON.parse(execFileSync(python, [script, dir, tokens.join(",")], { encoding: "utf8" }));
  const loaded = await readHfCheckpoint(dir);
  for (const mode of ["train", "infer"] as const) {
    const ours = forwardLogits(loaded.config, loaded.tensors, tokens, mode);
    let maxDiff = 0;
    reference.logits.forEach((row: number[], t: number) => {
      row.forEach((x, v) => {
        maxDiff = Math.max(maxDiff, Math.abs(x - ours[t * config.vocab_size + v]));
      });
    });
    assert.ok(maxDiff <= tolerance, `${mode}: max |logit diff| ${maxDiff} vs ${reference.implementation}`);
  }
}

describe("exported checkpoints against an independent HF-semantics implementation", {
  skip: noNumpy,
}, () => {
  before(() => initBackend());

  it("gives the logits of HF's Llama forward pass (tied embeddings, GQA) within 1e-3", async () => {
    await compare(configForSize("tiny"), {}, 1e-3);
  });

  it("gives the logits of HF's Qwen2 forward pass (q/k/v biases, untied head) from sharded bf16 files", async () => {
    const qwen: LlamaConfig = {
      ...configForSize("tiny"),
      architecture: "Qwen2ForCausalLM",
      attention_bias: true,
      tie_word_embeddings: false,
    };
    await compare(qwen, { dtype: "BF16", maxShardBytes: 60_000 }, 1e-3);
  });
});
