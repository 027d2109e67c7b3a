export { backendChatModel } from "./backend-chat-model.ts";
export { judgeLiveOutput } from "./judge-live-output.ts";
export { matchPattern, type PatternTerms } from "./match-pattern.ts";
export {
  parseTeachingConfig,
  TeachingConfig,
  type TeachingConfigInput,
} from "./teaching-config.ts";
export {
  ALL_TRAFFIC,
  type PatternTeachingStatus,
  TeachingRuntime,
  type TeachingRuntimeDeps,
} from "./teaching-runtime.ts";
export {
  getTeachingState,
  putTeachingState,
  type SwitchedOffPattern,
  type TeachingState,
} from "./teaching-store.ts";
