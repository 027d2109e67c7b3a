/**
 * Wilson score interval of a binomial proportion (Wilson 1927): unlike the raw ratio ± normal
 * error, it stays inside [0, 1] and is honest for small samples and ratios near 0 or 1 — exactly
 * where an NDR gate of 0.99 lives. No trials gives the uninformative [0, 1].
 */
export function wilsonInterval(
  successes: number,
  trials: number,
  z = 1.96,
): { lower: number; upper: number } {
  if (trials === 0) return { lower: 0, upper: 1 };
  const p = successes / trials;
  const z2 = z * z;
  const denominator = 1 + z2 / trials;
  const center = (p + z2 / (2 * trials)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / trials + z2 / (4 * trials * trials))) / denominator;
  return { lower: Math.max(0, center - half), upper: Math.min(1, center + half) };
}
