import { tf } from "../../backend/tf-backend.ts";

/** Optional terms added to the DPO loss. */
export interface DpoRegularizers {
  /** Weight of the entropy bonus (the loss falls by it times the mean per-token entropy); needs `entropy`. */
  entropyCoef?: number;
  /** Per-token entropy of the policy's next-token distributions, [2P, L]. */
  entropy?: tf.Tensor2D;
  /** Weight of the mean per-token NLL of the chosen responses (RPO). */
  nllCoef?: number;
}

/** The whole batch's counts, when the grid is one micro-batch of it: every mean then divides by these. */
export interface DpoTotals {
  pairs: number;
  /** Loss tokens of the chosen responses. */
  chosenTokens: number;
  /** Loss tokens of both responses. */
  tokens: number;
}

/**
 * Direct preference optimisation over (chosen, rejected) row pairs: rows 2i and 2i+1 of [2P, L] grids.
 * With h = (log pi(c) - log pi(r)) - (log ref(c) - log ref(r)) summed over each response's tokens:
 * - `sigmoid`: -log sigmoid(beta * h)        (Rafailov et al. 2023, eq. 7)
 * - `ipo`:     (h - 1 / (2 * beta))^2       (Azar et al. 2023, eq. 17, on summed log-ratios)
 * averaged over pairs; plus `nllCoef` x the chosen responses' mean token NLL (Pang et al. 2024, RPO) and minus
 * `entropyCoef` x the mean token entropy of both responses (keeps sampling diverse in semi-online runs).
 * With `totals` (the grid is a micro-batch) every mean divides by the whole batch's count, so the losses and
 * figures of a batch's micro-batches add up to the whole batch's.
 */
export function dpoLoss(
  logp: tf.Tensor2D,
  refLogp: tf.Tensor2D,
  mask: tf.Tensor2D,
  beta: number,
  variant: "sigmoid" | "ipo",
  regularizers: DpoRegularizers = {},
  totals?: DpoTotals,
): { loss: tf.Scalar; extra: Record<string, tf.Scalar> } {
  const pairs = logp.shape[0] / 2;
  /** Mean over the batch's pairs of a [P] tensor. */
  const perPairMean = (x: tf.Tensor) => (totals ? tf.div(tf.sum(x), Math.max(totals.pairs, 1)) : tf.mean(x));
  const seq = tf.reshape(tf.sum(tf.mul(logp, mask), 1), [pairs, 2]); // [P, 2] policy log-prob of (chosen, rejected)
  const refSeq = tf.reshape(tf.sum(tf.mul(refLogp, mask), 1), [pairs, 2]); // [P, 2]
  const ratio = tf.sub(seq, refSeq); // [P, 2] log pi/ref per response
  const [chosen, rejected] = tf.unstack(ratio, 1); // [P], [P]
  const h = tf.sub(chosen, rejected); // [P]
  const perPair =
    variant === "sigmoid" ? tf.softplus(tf.neg(tf.mul(h, beta))) : tf.square(tf.sub(h, 1 / (2 * beta))); // [P], softplus(-z) = -log sigmoid(z)
  let loss = perPairMean(perPair) as tf.Scalar;
  const extra: Record<string, tf.Scalar> = {};
  const nllCoef = regularizers.nllCoef ?? 0;
  if (nllCoef !== 0) {
    const [chosenMask] = tf.unstack(tf.reshape(mask, [pairs, 2, -1]), 1); // [P, L]
    const [chosenLogp] = tf.unstack(tf.reshape(logp, [pairs, 2, -1]), 1); // [P, L]
    const chosenTokens = totals ? Math.max(totals.chosenTokens, 1) : tf.maximum(tf.sum(chosenMask), 1);
    const nll = tf.div(tf.neg(tf.sum(tf.mul(chosenLogp, chosenMask))), chosenTokens);
    extra.chosenNll = nll as tf.Scalar;
    loss = tf.add(loss, tf.mul(nll, nllCoef)) as tf.Scalar;
  }
  const entropyCoef = regularizers.entropyCoef ?? 0;
  if (entropyCoef !== 0) {
    if (!regularizers.entropy)
      throw new TypeError("entropy: DPO with entropyCoef needs the per-token entropy");
    const tokens = totals ? Math.max(totals.tokens, 1) : tf.maximum(tf.sum(mask), 1);
    const meanEntropy = tf.div(tf.sum(tf.mul(regularizers.entropy, mask)), tokens);
    extra.entropy = meanEntropy as tf.Scalar;
    loss = tf.sub(loss, tf.mul(meanEntropy, entropyCoef)) as tf.Scalar;
  }
  return {
    loss,
    extra: {
      ...extra,
      margin: perPairMean(tf.mul(h, beta)) as tf.Scalar,
      rewardAccuracy: perPairMean(tf.cast(tf.greater(h, 0), "float32")) as tf.Scalar,
      chosenReward: perPairMean(tf.mul(chosen, beta)) as tf.Scalar,
      rejectedReward: perPairMean(tf.mul(rejected, beta)) as tf.Scalar,
    },
  };
}
