import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { initBackend, tf } from "../backend/tf-backend.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { toWeights } from "../inference/model-weights.ts";
import { gridLogprobs } from "../train/grid-logprobs.ts";
import { tokenGrid } from "../train/token-grid.ts";
import { KvCache } from "./kv-cache.ts";
import { attentionMask, forward, fuseForInference, initWeights, ropeTables } from "./llama.ts";
import { configForSize, type LlamaConfig } from "./llama-config.ts";

/** A very small GQA config with untied head and q/k/v biases, so every code path is exercised. */
const micro: LlamaConfig = {
  ...configForSize("tiny"),
  architecture: "Qwen2ForCausalLM",
  hidden_size: 16,
  intermediate_size: 24,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 64,
  tie_word_embeddings: false,
  attention_bias: true,
};

describe("Llama model", () => {
  before(() => initBackend());

  it("has gradients that match central finite differences", () => {
    const tensors = initWeights(micro, 3);
    // larger weights make the function less flat, so differences stand out of float32 noise
    for (const t of tensors.values())
      for (let i = 0; i < t.data.length; i++) t.data[i] *= t.data.length > 64 ? 10 : 1;
    const weights = toWeights(micro, tensors);
    const rope = ropeTables(micro);
    const grid = tokenGrid(
      {
        promptTokens: [
          [256, 72, 105],
          [256, 7],
        ],
        outputTokens: [
          [33, 10, 263],
          [5, 6],
        ],
      },
      264,
      64,
    );
    const lossOf = (w: Record<string, tf.Tensor>) =>
      tf.tidy(() =>
        tf.neg(
          tf.sum(
            tf.mul(gridLogprobs(micro, w, rope, grid).logp, tf.tensor2d(grid.mask, [2, grid.length - 1])),
          ),
        ),
      );
    const names = [
      "model.layers.0.self_attn.q_proj.weight",
      "model.layers.1.mlp.down_proj.weight",
      "model.embed_tokens.weight",
      "model.layers.0.self_attn.k_proj.bias",
      "lm_head.weight",
      "model.norm.weight",
    ];
    const analytic = tf.grads((...xs: tf.Tensor[]) => {
      const w = { ...weights };
      names.forEach((n, i) => {
        w[n] = xs[i];
      });
      return lossOf(w) as tf.Scalar;
    })(names.map((n) => weights[n]));
    names.forEach((name, i) => {
      const g = analytic[i].dataSync();
      const base = weights[name].dataSync().slice();
      const shape = weights[name].shape;
      for (const idx of [0, 7, base.length - 1].filter((j) => j < base.length)) {
        const h = 1e-2;
        const at = (delta: number) => {
          const copy = base.slice();
          copy[idx] += delta;
          const w = { ...weights, [name]: tf.tensor(copy, shape) };
          return lossOf(w).dataSync()[0];
        };
        const numeric = (at(h) - at(-h)) / (2 * h);
        const tol = 2e-2 * Math.max(1, Math.abs(numeric));
        assert.ok(
          Math.abs(numeric - g[idx]) <= tol,
          `${name}[${idx}]: analytic ${g[idx]} vs numeric ${numeric}`,
        );
      }
    });
  });

  it("decodes with the KV cache exactly the tokens that full recomputation picks", async () => {
    const tensors = initWeights(micro, 11);
    for (const t of tensors.values())
      for (let i = 0; i < t.data.length; i++) t.data[i] *= t.data.length > 64 ? 20 : 1;
    const engine = await EmbeddedInferenceEngine.create(micro, tensors);
    const prompts = [
      [256, 260, 104, 105, 263, 261],
      [256, 1, 2],
    ];
    const results = await engine.generate(
      prompts.map((p) => ({ promptTokens: p, temperature: 0, maxTokens: 12 })),
    );
    const weights = toWeights(micro, tensors);
    const rope = ropeTables(micro);
    results.forEach((result, r) => {
      const seq = [...prompts[r]];
      for (const expected of result.outputTokens) {
        const T = seq.length;
        const picked = tf.tidy(() => {
          const { logits } = forward(micro, weights, rope, {
            tokens: tf.tensor2d(seq, [1, T], "int32"),
            positions: tf.tensor2d(
              seq.map((_, i) => i),
              [1, T],
              "int32",
            ),
            mask: attentionMask([new Uint8Array(T)], 0, T),
            mode: "train",
          });
          return tf.argMax(tf.slice(logits, [0, T - 1, 0], [1, 1, micro.vocab_size]), -1);
        });
        assert.equal(picked.dataSync()[0], expected);
        seq.push(expected);
      }
      assert.ok(result.outputTokens.length > 3, "expected a few decoded tokens to compare");
    });
  });
  it("frees each layer's intermediates in inference: a prefill's peak memory does not grow with the layers", async () => {
    /** Bytes a 64-position prefill of 4 rows holds at its peak beyond the weights, for a model of `layers` layers. */
    const transientPeak = async (layers: number) => {
      const config: LlamaConfig = {
        ...micro,
        num_hidden_layers: layers,
        hidden_size: 64,
        intermediate_size: 256,
      };
      const weights = fuseForInference(config, toWeights(config, initWeights(config, 1)));
      const rope = ropeTables(config);
      const [B, T] = [4, 64];
      const before = tf.memory().numBytes;
      const info = await tf.profile(() =>
        tf.tidy(
          () =>
            forward(config, weights, rope, {
              tokens: tf.tensor2d(new Array(B * T).fill(7), [B, T], "int32"),
              positions: tf.tensor2d(
                Array.from({ length: B * T }, (_, i) => i % T),
                [B, T],
                "int32",
              ),
              mask: attentionMask(
                Array.from({ length: B }, () => new Array(T).fill(0)),
                0,
                T,
              ),
              cache: KvCache.forModel(config, B, T),
              mode: "infer",
              lastOnly: true,
            }).logits,
        ),
      );
      tf.dispose([...Object.values(weights), rope.cos, rope.sin, rope.rot]);
      return info.peakBytes - before;
    };
    const [two, twelve] = [await transientPeak(2), await transientPeak(12)];
    assert.ok(twelve < two * 1.5, `peak beyond the weights: ${two} bytes with 2 layers, ${twelve} with 12`);
  });
});
