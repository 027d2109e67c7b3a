import { tf } from "../../backend/tf-backend.ts";

/**
 * Supervised fine-tuning: masked negative log-likelihood, averaged over the tokens that count.
 * `logp` and `mask` are [B, L] (per-position log-prob of the next token, 1 where it is trained).
 */
export function sftLoss(
  logp: tf.Tensor2D,
  mask: tf.Tensor2D,
): { loss: tf.Scalar; extra: Record<string, tf.Scalar> } {
  const tokens = tf.maximum(tf.sum(mask), 1); // scalar
  const loss = tf.div(tf.neg(tf.sum(tf.mul(logp, mask))), tokens) as tf.Scalar;
  return { loss, extra: { nll: loss } };
}
