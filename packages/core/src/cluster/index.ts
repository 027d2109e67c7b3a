export { type ClusteringScores, clusteringScores } from "./clustering-scores.ts";
export { detectAndCluster, type TraceOutcome } from "./detect-and-cluster.ts";
export {
  type Assignment,
  type ClustererOptions,
  type ClusterState,
  DEFAULT_CLUSTERER_OPTIONS,
  FailureClusterer,
} from "./failure-clusterer.ts";
export type { FailurePattern, PatternExample } from "./failure-pattern.ts";
export { type FailureRecord, failureRecord } from "./failure-record.ts";
export { normalizeText, textTerms } from "./text-terms.ts";
