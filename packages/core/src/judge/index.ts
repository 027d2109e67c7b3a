export { answerTrace, taskAnswerTrace } from "./answer-trace.ts";
export { type JudgeBudget, MinuteWindow } from "./budget-window.ts";
export {
  type CalibrationItem,
  type CalibrationReport,
  type CalibrationVerdict,
  type ClassCalibration,
  calibrationReport,
} from "./calibration.ts";
export {
  createGroupJudge,
  type GroupJudge,
  type GroupJudgeOptions,
  type GroupVerdict,
  groupJudgeMessages,
  groupReplySchema,
  parseGroupReply,
} from "./group-judge.ts";
export {
  type JudgeClient,
  JudgeEndpointError,
  type JudgeRequest,
  openAIJudgeClient,
} from "./judge-client.ts";
export {
  createJudgeDetector,
  JUDGE_DETECTOR_ID,
  type JudgeCache,
  type JudgeDetector,
  type JudgeDetectorOptions,
  memoryJudgeCache,
} from "./judge-detector.ts";
export { answerText, judgedTranscript, judgeMessages } from "./judge-prompt.ts";
export {
  type JudgePriority,
  JudgeQueue,
  type JudgeQueueLimits,
  JudgeQueueRefusal,
  type JudgeQueueStats,
} from "./judge-queue.ts";
export { type JudgeReply, JudgeReplyError, judgeReplySchema, parseJudgeReply } from "./judge-reply.ts";
export { parseRubric, type Rubric, type RubricClass } from "./rubric.ts";
