/** One eval item judged for both models: 1 pass, 0 fail (or a graded score in [0, 1]). */
export interface PairedScore {
  baseline: number;
  candidate: number;
}

/**
 * Non-Degradation Rate: the share of items on which the candidate is not worse than the current model
 * (candidate score >= baseline score). 1 for an empty list: nothing was degraded.
 */
export function nonDegradationRate(items: readonly PairedScore[]): number {
  if (items.length === 0) return 1;
  return items.filter((i) => i.candidate >= i.baseline).length / items.length;
}
