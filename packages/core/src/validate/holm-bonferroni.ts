/** One hypothesis after Holm's step-down correction. */
export interface HolmDecision {
  pValue: number;
  /** The level this p-value was compared with: alpha / (m − rank), rank from 0 for the smallest p-value. */
  threshold: number;
  /** True when rejected: every smaller p-value was rejected too and this one is below its threshold. */
  rejected: boolean;
}

/**
 * Holm–Bonferroni: tests m hypotheses at family-wise error rate alpha (the chance that any true "not worse" slice is
 * called worse), uniformly more powerful than plain Bonferroni. Sort the p-values, compare the k-th smallest with
 * alpha / (m − k), and stop rejecting at the first that is not below. Decisions come back in the input order.
 */
export function holmBonferroni(pValues: readonly number[], alpha: number): HolmDecision[] {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha: expected a level in (0, 1), got ${alpha}`);
  const m = pValues.length;
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i);
  const out: HolmDecision[] = new Array(m);
  let rejecting = true;
  order.forEach(({ p, i }, rank) => {
    const threshold = alpha / (m - rank);
    rejecting = rejecting && p < threshold;
    out[i] = { pValue: p, threshold, rejected: rejecting };
  });
  return out;
}
