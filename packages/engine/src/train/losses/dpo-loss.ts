import { tf } from "../../backend/tf-backend.ts";

/**
 * Direct preference optimisation over (chosen, rejected) row pairs: rows 2i and 2i+1 of [2P, L] grids.
 * With h = (log pi(c) - log pi(r)) - (log ref(c) - log ref(r)) summed over each response's tokens:
 * - `sigmoid`: -log sigmoid(beta * h)        (Rafailov et al. 2023, eq. 7)
 * - `ipo`:     (h - 1 / (2 * beta))^2       (Azar et al. 2023, eq. 17, on summed log-ratios)
 * averaged over pairs.
 */
export function dpoLoss(
  logp: tf.Tensor2D,
  refLogp: tf.Tensor2D,
  mask: tf.Tensor2D,
  beta: number,
  variant: "sigmoid" | "ipo",
): { loss: tf.Scalar; extra: Record<string, tf.Scalar> } {
  const pairs = logp.shape[0] / 2;
  const seq = tf.reshape(tf.sum(tf.mul(logp, mask), 1), [pairs, 2]); // [P, 2] policy log-prob of (chosen, rejected)
  const refSeq = tf.reshape(tf.sum(tf.mul(refLogp, mask), 1), [pairs, 2]); // [P, 2]
  const ratio = tf.sub(seq, refSeq); // [P, 2] log pi/ref per response
  const [chosen, rejected] = tf.unstack(ratio, 1); // [P], [P]
  const h = tf.sub(chosen, rejected); // [P]
  const perPair =
    variant === "sigmoid" ? tf.softplus(tf.neg(tf.mul(h, beta))) : tf.square(tf.sub(h, 1 / (2 * beta))); // [P], softplus(-z) = -log sigmoid(z)
  const loss = tf.mean(perPair) as tf.Scalar;
  return {
    loss,
    extra: {
      margin: tf.mean(tf.mul(h, beta)) as tf.Scalar,
      rewardAccuracy: tf.mean(tf.cast(tf.greater(h, 0), "float32")) as tf.Scalar,
      chosenReward: tf.mean(tf.mul(chosen, beta)) as tf.Scalar,
      rejectedReward: tf.mean(tf.mul(rejected, beta)) as tf.Scalar,
    },
  };
}
