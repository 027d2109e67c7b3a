import { tf } from "../../backend/tf-backend.ts";

/**
 * Supervised fine-tuning: masked negative log-likelihood, averaged over the tokens that count.
 * `logp` and `mask` are [B, L] (per-position log-prob of the next token, 1 where it is trained).
 * `totalTokens` is the whole batch's count when this grid is one micro-batch of it (the losses of its
 * micro-batches then add up to the whole batch's loss); by default, this grid's own.
 */
export function sftLoss(
  logp: tf.Tensor2D,
  mask: tf.Tensor2D,
  totalTokens?: number,
): { loss: tf.Scalar; extra: Record<string, tf.Scalar> } {
  const tokens = totalTokens === undefined ? tf.maximum(tf.sum(mask), 1) : Math.max(totalTokens, 1);
  const loss = tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), tokens) as tf.Scalar;
  return { loss, extra: { nll: loss } };
}
