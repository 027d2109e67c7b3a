/** Standard normal CDF (Abramowitz–Stegun 7.1.26 for erf, |error| < 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}

/**
 * One-sided two-proportion z statistic (pooled) for "the second rate is higher than the first": k1 of n1 before,
 * k2 of n2 after. Positive when the rate rose; 0 when either sample is empty or both rates are 0 or 1.
 */
export function zWorse(n1: number, k1: number, n2: number, k2: number): number {
  if (n1 === 0 || n2 === 0) return 0;
  const p = (k1 + k2) / (n1 + n2);
  const se = Math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2));
  return se === 0 ? 0 : (k2 / n2 - k1 / n1) / se;
}

/** One-sided p-values of a two-proportion change: `rose` for "the rate rose", `fell` for "the rate fell". */
export function proportionChangePValues(
  n1: number,
  k1: number,
  n2: number,
  k2: number,
): { rose: number; fell: number } {
  const z = zWorse(n1, k1, n2, k2);
  return { rose: 1 - normalCdf(z), fell: normalCdf(z) };
}
