/** How well predicted clusters match true groups. */
export interface ClusteringScores {
  /** Σ over clusters of its largest true group, / N: 1 when no cluster mixes modes. */
  purity: number;
  /** Σ over true groups of its largest cluster, / N (inverse purity): 1 when no mode is split. */
  completeness: number;
  clusters: number;
  groups: number;
}

/** Purity and completeness of `predicted` cluster ids against `truth` group ids (pairs by position). */
export function clusteringScores(items: readonly { predicted: string; truth: string }[]): ClusteringScores {
  const byCluster = new Map<string, Map<string, number>>();
  const byTruth = new Map<string, Map<string, number>>();
  const bump = (outer: Map<string, Map<string, number>>, a: string, b: string) => {
    const inner = outer.get(a) ?? new Map<string, number>();
    inner.set(b, (inner.get(b) ?? 0) + 1);
    outer.set(a, inner);
  };
  for (const { predicted, truth } of items) {
    bump(byCluster, predicted, truth);
    bump(byTruth, truth, predicted);
  }
  const sumOfMax = (outer: Map<string, Map<string, number>>) =>
    [...outer.values()].reduce((sum, inner) => sum + Math.max(...inner.values()), 0);
  const n = items.length || 1;
  return {
    purity: sumOfMax(byCluster) / n,
    completeness: sumOfMax(byTruth) / n,
    clusters: byCluster.size,
    groups: byTruth.size,
  };
}
