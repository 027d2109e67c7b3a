export type { ChatCompletion, ChatModel, CompleteOptions, TeachMessage } from "./chat-model.ts";
export { EngineChatModel, type EngineChatModelOptions } from "./engine-chat-model.ts";
export {
  type PhaseWarning,
  type ProbeJudgement,
  type RunTeachingOptions,
  runTeaching,
  type SolutionAttempt,
  solutionAnswers,
  type TeachingMode,
  type TeachingRun,
  type TeachingTask,
  type Verify,
} from "./run-teaching.ts";
export type { TeachingPhase, TeachingPhaseRecord } from "./teaching-phase.ts";
export { toTraceSteps } from "./to-trace-steps.ts";
