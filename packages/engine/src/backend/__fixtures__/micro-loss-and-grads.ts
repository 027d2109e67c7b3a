// Prints, as JSON, the native-kernel status and one micro model's loss (next-token log-probs and entropies) and
// per-weight gradient sums on the wasm backend: run under ARC_ENGINE_NATIVE=0 and =1, the two must agree.
import { toWeights } from "../../inference/model-weights.ts";
import { initWeights, ropeTables } from "../../model/llama.ts";
import { configForSize, type LlamaConfig } from "../../model/llama-config.ts";
import { gridLogprobs } from "../../train/grid-logprobs.ts";
import { tokenGrid } from "../../train/token-grid.ts";
import { nativeAddonStatus } from "../native-addon.ts";
import { initBackend, tf } from "../tf-backend.ts";

await initBackend("wasm");
const micro: LlamaConfig = {
  ...configForSize("tiny"),
  hidden_size: 32,
  intermediate_size: 40,
  num_hidden_layers: 2,
  num_attention_heads: 4,
  num_key_value_heads: 2,
  max_position_embeddings: 64,
};
const weights = toWeights(micro, initWeights(micro, 5));
const rope = ropeTables(micro);
const grid = tokenGrid(
  {
    promptTokens: Array.from({ length: 8 }, (_, r) =>
      Array.from({ length: 9 + r }, (_, i) => (i * 31 + r) % 256),
    ),
    outputTokens: Array.from({ length: 8 }, (_, r) =>
      Array.from({ length: 7 }, (_, i) => (i * 17 + r * 3) % 256),
    ),
  },
  micro.vocab_size,
  micro.max_position_embeddings,
);
const names = Object.keys(weights);
const variables = Object.fromEntries(names.map((n) => [n, tf.variable(weights[n], true, n)]));
const mask = tf.tensor2d(grid.mask, [grid.rows, grid.length - 1]);
const { value, grads } = tf.variableGrads(() => {
  // the next-token log-probs and, weighted, their entropies: every differentiable output of gridLogprobs
  const { logp, entropy } = gridLogprobs(micro, variables, rope, grid, true);
  return tf.neg(tf.sum(tf.mul(tf.add(logp, tf.mul(entropy as tf.Tensor, 0.3)), mask))) as tf.Scalar;
}, Object.values(variables));
const sums: Record<string, number[]> = {};
for (const n of names) sums[n] = [tf.sum(grads[n]).dataSync()[0], tf.sum(tf.abs(grads[n])).dataSync()[0]];
console.log(JSON.stringify({ status: nativeAddonStatus(), loss: value.dataSync()[0], sums }));
