import { tf } from "../../backend/tf-backend.ts";

/** GRPO settings, defaults applied (see `Objective` in @arc/core). */
export interface GrpoLossOptions {
  clipEpsilon: number;
  klCoef: number;
  entropyCoef: number;
  aggregation: "token" | "sequence" | "dr-grpo";
}

/** The whole batch's counts, when the grid is one micro-batch of it: every mean then divides by these. */
export interface GrpoTotals {
  /** Loss tokens. */
  tokens: number;
  rows: number;
  /** Rows x grid length of the whole batch's grid (the `dr-grpo` constant). */
  cells: number;
}

/** Optional per-token inputs of the GRPO loss, each [B, L]. */
export interface GrpoExtras {
  refLogp?: tf.Tensor2D;
  entropy?: tf.Tensor2D;
  /** Decoupled PPO (AReaL, eq. 5): constant pi_prox / pi_behaviour weight on each token's clipped surrogate. */
  behaviourWeight?: tf.Tensor2D;
}

/**
 * GRPO (Shao et al. 2024, eq. 3) on [B, L] grids with per-row advantages [B, 1]:
 *   per token: -min(r * A, clip(r, 1 - eps, 1 + eps) * A) + klCoef * KL - entropyCoef * H,
 *   r = exp(logp - oldLogp), KL = exp(ref - logp) - (ref - logp) - 1 (the k3 estimator of eq. 4).
 * For the decoupled objective `oldLogp` is the proximal policy and each token's surrogate is multiplied
 * by `behaviourWeight`. Aggregation: `token` averages over all masked tokens of the batch; `sequence`
 * averages within each sequence, then over sequences; `dr-grpo` (Liu et al. 2025) sums and divides by
 * rows x grid length, a constant that removes the length bias. With `totals` (the grid is a micro-batch) these
 * divide by the whole batch's counts, so the losses and figures of its micro-batches add up to the whole batch's.
 */
export function grpoLoss(
  logp: tf.Tensor2D,
  oldLogp: tf.Tensor2D,
  advantages: tf.Tensor2D,
  mask: tf.Tensor2D,
  options: GrpoLossOptions,
  { refLogp, entropy, behaviourWeight }: GrpoExtras = {},
  totals?: GrpoTotals,
): { loss: tf.Scalar; extra: Record<string, tf.Scalar> } {
  const eps = options.clipEpsilon;
  const ratio = tf.exp(tf.sub(logp, oldLogp)); // [B, L]
  const unclipped = tf.mul(ratio, advantages); // [B, L]
  const clipped = tf.mul(tf.clipByValue(ratio, 1 - eps, 1 + eps), advantages); // [B, L]
  const surrogate = tf.minimum(unclipped, clipped); // [B, L]
  let perToken = tf.neg(behaviourWeight ? tf.mul(surrogate, behaviourWeight) : surrogate); // [B, L]
  const extra: Record<string, tf.Scalar> = {};
  const tokens = totals ? Math.max(totals.tokens, 1) : tf.maximum(tf.sum(mask), 1);
  const masked = (x: tf.Tensor) => tf.div(tf.sum(tf.mul(x, mask)), tokens) as tf.Scalar;
  if (refLogp) {
    const d = tf.sub(refLogp, logp); // [B, L]
    const kl = tf.sub(tf.sub(tf.exp(d), d), 1); // [B, L]
    if (options.klCoef !== 0) perToken = tf.add(perToken, tf.mul(kl, options.klCoef));
    extra.kl = masked(kl);
  }
  if (entropy) {
    if (options.entropyCoef !== 0) perToken = tf.sub(perToken, tf.mul(entropy, options.entropyCoef));
    extra.entropy = masked(entropy);
  }
  const weighted = tf.mul(perToken, mask); // [B, L]
  let loss: tf.Scalar;
  if (options.aggregation === "token") loss = tf.div(tf.sum(weighted), tokens) as tf.Scalar;
  else if (options.aggregation === "sequence") {
    const perRow = tf.div(tf.sum(weighted, 1), tf.maximum(tf.sum(mask, 1), 1)); // [B]
    loss = (totals ? tf.div(tf.sum(perRow), totals.rows) : tf.mean(perRow)) as tf.Scalar;
  } else loss = tf.div(tf.sum(weighted), totals?.cells ?? mask.shape[0] * mask.shape[1]) as tf.Scalar;
  const outside = tf.logicalOr(tf.greater(ratio, 1 + eps), tf.less(ratio, 1 - eps));
  extra.clipFraction = masked(tf.cast(outside, "float32"));
  extra.ratio = masked(ratio);
  if (behaviourWeight) extra.behaviourWeight = masked(behaviourWeight);
  return { loss, extra };
}
