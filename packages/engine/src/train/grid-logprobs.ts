import { fusedOpsInstalled, fusedTokenEntropy, fusedTokenLogprobs } from "../backend/fused-kernels.ts";
import { tf } from "../backend/tf-backend.ts";
import { forward, type RopeTables, type Weights } from "../model/llama.ts";
import type { LlamaConfig } from "../model/llama-config.ts";
import type { TokenGrid } from "./token-grid.ts";

/**
 * Log-prob of every next token on the grid, [B, L-1], differentiable w.r.t. the weights; with
 * `withEntropy`, also the entropy of each next-token distribution. Causal attention only: right padding
 * never precedes a real token, so it needs no mask.
 */
export function gridLogprobs(
  config: LlamaConfig,
  weights: Weights,
  rope: RopeTables,
  grid: TokenGrid,
  withEntropy = false,
  loraScale = 1,
): { logp: tf.Tensor2D; entropy?: tf.Tensor2D } {
  const B = grid.rows;
  const L = grid.length;
  const V = config.vocab_size;
  const positions = tf.tensor2d(
    Array.from({ length: B * L }, (_, i) => i % L),
    [B, L],
    "int32",
  );
  const causal = new Float32Array(L * L);
  for (let t = 0; t < L; t++) for (let s = t + 1; s < L; s++) causal[t * L + s] = -1e9;
  const mask = tf.tensor4d(causal, [1, 1, L, L]);
  const tokens = tf.tensor2d(grid.tokens, [B, L], "int32");
  const { logits } = forward(config, weights, rope, { tokens, positions, mask, mode: "train", loraScale }); // [B, L, V]
  if (fusedOpsInstalled()) {
    const logp = fusedTokenLogprobs(logits, grid.targets); // [B, L-1]
    return withEntropy ? { logp, entropy: fusedTokenEntropy(logits) } : { logp };
  }
  const logSoft = tf.logSoftmax(tf.slice(logits, [0, 0, 0], [B, L - 1, V])); // [B, L-1, V]
  const targets = tf.cast(tf.oneHot(tf.tensor2d(grid.targets, [B, L - 1], "int32"), V), "float32"); // [B, L-1, V]
  const logp = tf.sum(tf.mul(logSoft, targets), -1) as tf.Tensor2D; // [B, L-1]
  if (!withEntropy) return { logp };
  const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logSoft), logSoft), -1)) as tf.Tensor2D; // [B, L-1]
  return { logp, entropy };
}
