export {
  ARC_STEP_PREFIX,
  parseVerlMetricsLine,
  stepRecordsInLog,
  verlStepRecord,
} from "./job-log.ts";
export { type VerlData, writeVerlData } from "./verl-data.ts";
export {
  checkVerlRecipe,
  shellWord,
  type VerlJobPaths,
  verlEntrypoint,
  verlOverrides,
} from "./verl-overrides.ts";
