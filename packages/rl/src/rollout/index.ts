export { EngineRolloutSource, type EngineRolloutSourceOptions } from "./engine-rollout-source.ts";
export type { RolloutBatch, RolloutSource } from "./rollout-source.ts";
export { rolloutSeed, type SampleGroupsOptions, sampleGroups } from "./sample-groups.ts";
export type { ScoredGroup } from "./scored-group.ts";
export {
  type GroupSampler,
  type GroupSamplingOptions,
  SyncRolloutSource,
  type SyncRolloutSourceOptions,
  workflowSampler,
} from "./sync-rollout-source.ts";
