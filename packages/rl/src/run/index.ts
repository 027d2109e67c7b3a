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
