export {
  type DatasetSchedule,
  listDatasetSchedules,
  putDatasetSchedule,
  runDueSchedules,
} from "./dataset-schedules.ts";
export {
  type DatasetInfo,
  datasetId,
  getDataset,
  listDatasets,
  type StoredDataset,
} from "./dataset-store.ts";
export { type DetectionClaim, pendingDetections } from "./detection-queue.ts";
export { type DetectionPass, DetectionWorker } from "./detection-worker.ts";
export { type DatasetExport, EXPORT_FORMATS, type ExportFormat, exportDataset } from "./export-dataset.ts";
export {
  FailurePipelineConfig,
  type FailurePipelineConfigInput,
  failurePipelineConfigFromEnv,
  type RegistrySetup,
} from "./failure-pipeline-config.ts";
export { currentFailureMembers, type FailureMember } from "./failure-store.ts";
export {
  failureRatesBetween,
  failureRatesOverTime,
  type PatternIncidence,
  patternIncidence,
  type RatePoint,
  type VersionRate,
} from "./live-failure-rates.ts";
export { getPattern, listPatterns, type PatternQuery } from "./pattern-store.ts";
export {
  buildDataset,
  DatasetRequest,
  type DatasetRequestInput,
  synthesizeDataset,
} from "./synthesize-dataset.ts";
export { tenantRegistry } from "./tenant-registry.ts";
export { getVerdict, getVerdicts, type StoredVerdict, verdictCounts } from "./verdict-store.ts";
