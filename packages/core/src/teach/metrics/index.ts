export {
  type OutcomeGrouping,
  parseTeachingOutcomes,
  type TeachingMetrics,
  teachingMetrics,
  teachingMetricsBy,
  UNGROUPED,
} from "./teaching-metrics.ts";
export { TeachingOutcome } from "./teaching-outcome.ts";
