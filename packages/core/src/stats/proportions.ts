/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error about 1e-15). */
export function logGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
    12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x); // reflection
  const z = x - 1;
  let sum = c[0];
  for (let i = 1; i < 9; i++) sum += c[i] / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(sum);
}

/** ln C(n, k). */
function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/**
 * One-sided p-values of a two-proportion change by Fisher's exact test, k1 of n1 before and k2 of n2 after:
 * given the k1 + k2 events in all, the number falling after is hypergeometric, and `rose` is the chance of at least
 * k2 of them falling after ("the rate rose"), `fell` of at most k2 ("it fell"). Exact at any count, where a z test
 * calls one event among a hundred calls "significantly" more than none among thousands.
 */
export function proportionChangePValues(
  n1: number,
  k1: number,
  n2: number,
  k2: number,
): { rose: number; fell: number } {
  const events = k1 + k2;
  const total = n1 + n2;
  if (n1 === 0 || n2 === 0 || events === 0 || events === total) return { rose: 1, fell: 1 };
  const lowest = Math.max(0, events - n1);
  const highest = Math.min(events, n2);
  const denominator = logChoose(total, n2);
  const mass = (x: number) =>
    Math.exp(logChoose(events, x) + logChoose(total - events, n2 - x) - denominator);
  let rose = 0;
  for (let x = k2; x <= highest; x++) rose += mass(x);
  let fell = 0;
  for (let x = lowest; x <= k2; x++) fell += mass(x);
  return { rose: Math.min(1, rose), fell: Math.min(1, fell) };
}
