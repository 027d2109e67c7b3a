/**
 * The standard normal CDF through erf, by Abramowitz and Stegun's formula 7.1.26 (absolute error below 1.5e-7):
 * enough for a p-value read against 0.05.
 */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/** A one-sided pooled two-proportion z-test of "the rate fell": before `a` of `n`, after `b` of `m`. */
export interface ProportionFall {
  z: number;
  /** P(Z ≥ z) under "no change". */
  pValue: number;
}

/** The name reports print next to the figures this test gives. */
export const proportionFallTestName = "two-proportion z-test (pooled), one-sided, α = 0.05";

/** Tests whether the failure rate fell from `a / n` to `b / m`; null when either side is empty or the pool is 0 or 1. */
export function proportionFall(a: number, n: number, b: number, m: number): ProportionFall | null {
  if (n === 0 || m === 0) return null;
  const pooled = (a + b) / (n + m);
  if (pooled === 0 || pooled === 1) return null;
  const z = (a / n - b / m) / Math.sqrt(pooled * (1 - pooled) * (1 / n + 1 / m));
  return { z, pValue: 1 - normalCdf(z) };
}
