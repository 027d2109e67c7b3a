export { type BuildRunDatasetsOptions, buildRunDatasets, type RunDatasets } from "./build-run-datasets.ts";
export { type ExecuteRunContext, type ExecuteRunResult, executeRun, metricsSummary } from "./execute-run.ts";
export {
  Orchestrator,
  type OrchestratorOptions,
  type TenantOrchestratorStatus,
  tenantOrchestratorStatus,
} from "./orchestrator.ts";
export {
  OrchestratorConfig,
  type OrchestratorConfigInput,
  orchestratorConfigFromEnv,
} from "./orchestrator-config.ts";
export { type ImprovementCycleOptions, runImprovementCycle } from "./run-improvement-cycle.ts";
export { createRunService, type RunService } from "./run-service.ts";
export {
  claimRun,
  createRun,
  getRun,
  listRuns,
  type RunDataset,
  type RunRecord,
  type RunRowStatus,
  requestCancel,
  TENANT_TRIGGER,
  type TenantRun,
  tenantRun,
  tenantRunsDir,
} from "./run-store.ts";
