/**
 * Long-context RoPE scalings against transformers itself: tiny Llamas that transformers saves with `rope_scaling`
 * (linear, Llama 3, YaRN) load here and give transformers' logits over 200 positions, past the original context of
 * 64 where the scalings differ; the PyTorch engine loads them too and scores the same positions.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { initBackend } from "../backend/tf-backend.ts";
import { torchUnavailable } from "../torch/__fixtures__/torch-available.ts";
import { TorchTrainEngine } from "../torch/torch-train-engine.ts";
import { torchPython } from "../torch/torch-worker.ts";
import { forwardLogits } from "./__fixtures__/forward-logits.ts";
import { CheckpointError } from "./checkpoint-error.ts";
import { parseConfigJson, readHfCheckpoint, writeHfCheckpoint } from "./hf-checkpoint.ts";

const REFERENCE = fileURLToPath(new URL("./__fixtures__/rope_scaling_reference.py", import.meta.url));
const scalings = {
  linear: { rope_type: "linear", factor: 4 },
  llama3: {
    rope_type: "llama3",
    factor: 8,
    low_freq_factor: 1,
    high_freq_factor: 4,
    original_max_position_embeddings: 64,
  },
  yarn: { rope_type: "yarn", factor: 4, original_max_position_embeddings: 64 },
  yarn_mscale: {
    rope_type: "yarn",
    factor: 4,
    original_max_position_embeddings: 64,
    beta_fast: 16,
    beta_slow: 2,
    mscale: 1,
    mscale_all_dim: 0.5,
  },
};
const tokens = Array.from({ length: 200 }, (_, i) => (i * 37 + 11) % 264);

describe("RoPE scaling against transformers", { skip: torchUnavailable() }, () => {
  before(() => initBackend());

  it("gives transformers' logits for linear, Llama 3 and YaRN scaling", async () => {
    const out = await mkdtemp(join(tmpdir(), "arc-rope-scaling-"));
    const run = spawnSync(torchPython(), [REFERENCE], {
      input: JSON.stringify({ out, scalings, tokens }),
      encoding: "utf8",
      maxBuffer: 64 * 2 ** 20,
    });
    assert.equal(run.status, 0, run.stderr);
    const want = JSON.parse(run.stdout) as Record<string, number[][]>;
    for (const name of Object.keys(scalings)) {
      const { config, tensors } = await readHfCheckpoint(join(out, name));
      assert.ok(config.rope_scaling, `${name}: the scaling is read`);
      const got = forwardLogits(config, tensors, tokens, "infer");
      let worst = 0;
      want[name].forEach((row, t) => {
        row.forEach((x, v) => {
          worst = Math.max(worst, Math.abs(x - got[t * config.vocab_size + v]));
        });
      });
      assert.ok(worst < 1e-4, `${name}: largest logit gap ${worst}`);
      // the PyTorch engine trains and scores it with the same positions
      const torch = await TorchTrainEngine.fromCheckpoint(join(out, name), { device: "cpu" });
      try {
        const [scored] = await torch.logprobs({
          promptTokens: [tokens.slice(0, 1)],
          outputTokens: [tokens.slice(1)],
        });
        let gap = 0;
        scored.forEach((x, t) => {
          const row = want[name][t];
          const top = Math.max(...row);
          const logZ = top + Math.log(row.reduce((sum, v) => sum + Math.exp(v - top), 0));
          gap = Math.max(gap, Math.abs(x - (row[tokens[t + 1]] - logZ)));
        });
        assert.equal(scored.length, tokens.length - 1);
        assert.ok(gap < 1e-4, `${name}: the torch engine's log-probs differ by ${gap}`);
      } finally {
        await torch.close();
      }
      // and writes it back so that it reads the same
      const copy = join(out, `${name}-copy`);
      await writeHfCheckpoint(copy, config, tensors);
      assert.deepEqual((await readHfCheckpoint(copy)).config, config);
    }
  });
});

describe("RoPE scaling in config.json", () => {
  const base = {
    architectures: ["LlamaForCausalLM"],
    vocab_size: 264,
    hidden_size: 64,
    intermediate_size: 176,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 256,
  };
  it("reads transformers 5's rope_parameters and the older rope_scaling alike", () => {
    const v5 = parseConfigJson({ ...base, rope_parameters: { rope_theta: 5e5, ...scalings.llama3 } });
    const v4 = parseConfigJson({
      ...base,
      rope_theta: 5e5,
      rope_scaling: { ...scalings.llama3, rope_type: undefined, type: "llama3" },
    });
    assert.equal(v5.rope_theta, 5e5);
    assert.deepEqual(v5.rope_scaling, v4.rope_scaling);
    assert.equal(
      parseConfigJson({ ...base, rope_parameters: { rope_type: "default", rope_theta: 1e4 } }).rope_scaling,
      undefined,
    );
  });
  it("names a scaling it does not compute, and a missing field", () => {
    assert.throws(
      () => parseConfigJson({ ...base, rope_scaling: { rope_type: "longrope", factor: 2 } }, "m/config.json"),
      (e: Error) =>
        e instanceof CheckpointError &&
        /m\/config.json: rope scaling type "longrope" is not supported/.test(e.message),
    );
    assert.throws(
      () => parseConfigJson({ ...base, rope_scaling: { rope_type: "llama3", factor: 8 } }),
      /low_freq_factor: expected a positive number/,
    );
  });
});
