export { type AdvantageNormalization, groupAdvantages } from "./group-advantages.ts";
export { bestWorstPair, type PairChoice } from "./preference-pairs.ts";
export { type GuidedSchedule, scheduledSftBatch, sftBatch } from "./sft-batch.ts";
export { mayStartRollout, type StalenessGateInput, trajectoryStaleness } from "./staleness-gate.ts";
export { generatorStepAt, type SyncInterval, syncDue } from "./sync-schedule.ts";
