export type { ChatMessage, EngineFactory, RenderExample, TrainEngineSettings } from "./engine-factory.ts";
export { metricsChartSvg } from "./metrics-chart.ts";
export { formatDuration, progressLine } from "./progress-line.ts";
export { RunDir } from "./run-dir.ts";
export {
  type AsyncSourceFactory,
  newRunId,
  type RunOptions,
  resumeRun,
  startRun,
  TEACHING_DATA_FILE,
} from "./run-training.ts";
export type { CheckpointInfo, RunHooks, RunResult, RunState, RunStatus, StepRecord } from "./run-types.ts";
export { PLANNED_WARM_UP_FILE, type PlannedWarmUpRecord } from "./warm-up/planned-sft-warm-up.ts";
export { plannedWarmUp } from "./warm-up/planned-warm-up.ts";
export type {
  PlannedWarmUpContext,
  WarmUpPart,
  WarmUpPartOutcome,
  WarmUpPartRunner,
  WarmUpReport,
} from "./warm-up/warm-up-types.ts";
