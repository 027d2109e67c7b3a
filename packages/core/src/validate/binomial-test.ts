/** ln(n choose k), exact enough for the sample sizes of eval sets and canaries. */
function logChoose(n: number, k: number): number {
  let sum = 0;
  for (let i = 1; i <= k; i++) sum += Math.log(n - k + i) - Math.log(i);
  return sum;
}

/** P(X >= k) for X ~ Binomial(n, p): the one-sided p-value of seeing k or more "bad" outcomes out of n. */
export function binomialUpperTail(k: number, n: number, p: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n: expected a non-negative integer, got ${n}`);
  if (!Number.isInteger(k)) throw new RangeError(`k: expected an integer, got ${k}`);
  if (p < 0 || p > 1) throw new RangeError(`p: expected a probability in [0, 1], got ${p}`);
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p === 0) return 0;
  if (p === 1) return 1;
  let total = 0;
  for (let i = k; i <= n; i++) {
    total += Math.exp(logChoose(n, i) + i * Math.log(p) + (n - i) * Math.log(1 - p));
  }
  return Math.min(1, total);
}

/** Outcome of the paired test of a candidate against the current model on the same items. */
export interface PairedWorseTest {
  /** Items the current model passes and the candidate fails. */
  regressions: number;
  /** Items the candidate passes and the current model fails. */
  improvements: number;
  /** One-sided exact p-value of "the candidate is worse" (McNemar's exact test on the discordant items). */
  pValue: number;
  /** True when pValue < alpha: the candidate is significantly worse, not just unlucky on a few items. */
  worse: boolean;
}

/**
 * McNemar's exact (binomial) test on paired pass/fail outcomes: under "no difference", each discordant item is a
 * regression with probability 1/2, so P(X >= regressions | n = discordant) is the chance of seeing this many
 * regressions from an equally good model. Ties (both pass, both fail) carry no information about the difference.
 */
export function pairedWorseTest(regressions: number, improvements: number, alpha = 0.05): PairedWorseTest {
  const pValue = binomialUpperTail(regressions, regressions + improvements, 0.5);
  return { regressions, improvements, pValue, worse: pValue < alpha };
}
