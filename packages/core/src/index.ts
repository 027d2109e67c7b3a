/**
 * @arc/core's public surface, by name. The spec (the types other packages implement or produce) comes first; the
 * logic (decisions that need no I/O) after it. A name that nothing outside core uses stays unexported.
 */

// ---- Spec ----

// engine-api/: the Engine API: generation and training as separate roles, aligned token fields named once.
export type {
  ChatToolCall,
  FinishReason,
  GenerateOptions,
  GenMessage,
  GenRequest,
  GenResult,
  InferenceEngine,
  Objective,
  OutputGrammar,
  StepMetrics,
  TokenBatch,
  TokenEvent,
  ToolCallSyntax,
  TrainBatch,
  TrainEngine,
  WeightSource,
} from "./engine-api/index.ts";
// errors/: ArcError and one subclass per kind, each with statusCode, isRetryable and isInstance.
export {
  ArcError,
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
} from "./errors/index.ts";
// rollout/: the rollout API: task → episode → trajectory, workflows with engines injected.
export type {
  Agent,
  Environment,
  Observation,
  RolloutWorkflow,
  Task,
  TaskContext,
  Trajectory,
} from "./rollout/index.ts";
// trace/: the wire format of a trace: Trace/Step/Feedback schemas and the ingest body's reader.
export {
  ChatMessage,
  checkJsonDepth,
  checkJsonValue,
  compileJsonReader,
  DEFAULT_JSON_LIMITS,
  Feedback,
  type JsonLimits,
  type JsonReader,
  type JsonValueChecks,
  LlmCall,
  type LoneSurrogatePolicy,
  mayHoldLoneSurrogates,
  notAccepted,
  parseBoundedJson,
  parseFeedbackBatch,
  parseTraceBatch,
  RecordId,
  refuseUnknownKeys,
  Step,
  StepError,
  StepKind,
  Timestamp,
  ToolCall,
  Trace,
  TraceBatch,
  type TraceInput,
  toInvalidInputError,
  Usage,
} from "./trace/index.ts";

// ---- Logic ----

// cluster/: incremental failure clustering into stable patterns.
export {
  type ClusterState,
  clusteringScores,
  detectAndCluster,
  FailureClusterer,
  type FailurePattern,
  type FailureRecord,
  failureRecord,
  textTerms,
} from "./cluster/index.ts";
// deploy/: canary policy, SPRT, sticky bucketing.
export {
  type ArmCounts,
  CanaryPolicy,
  type CanaryPolicyInput,
  decideCanaryStep,
  routesToCanary,
} from "./deploy/index.ts";
// detect/: detectors, the detector registry and verdicts.
export {
  DetectionConfig,
  type DetectionConfigInput,
  type Detector,
  DetectorRegistry,
  type Evidence,
  failedVerdict,
  type Judgement,
  passedVerdict,
  type Severity,
  solutionsByQuestion,
  toolCallArguments,
  toolCallText,
  traceModelVersion,
  traceQuestion,
  unknownVerdict,
  type Verdict,
} from "./detect/index.ts";
// export/: dataset, fine-tuning, preference and VERL parquet exports.
export {
  type ChatExample,
  chatExampleOf,
  chatExamplesFromPreferences,
  hasReference,
  toChatJsonl,
  toDatasetJsonl,
  toPreferenceJsonl,
  toVerlParquet,
} from "./export/index.ts";
// families/: the task-family registry, which holds the built-in families (they are @arc/core/families), and families
// given as JSON data.
export { defineTaskFamily } from "./families/define-task-family.ts";
export { JsonFamilySpec, jsonTaskFamily } from "./families/json-family.ts";
export { familyPrompt, generateTasks, TaskFamilyRegistry, taskPrompt } from "./families/registry.ts";
export { DEFAULT_BASE_MODEL, DEFAULT_ENV, getTaskFamily, taskFamilies } from "./families/task-families.ts";
export { verifyTask } from "./families/verify-task.ts";
// judge/: a tenant's rubric, the judge detector, the group judge and a judge's calibration.
export {
  answerText,
  answerTrace,
  type CalibrationItem,
  type CalibrationReport,
  type CalibrationVerdict,
  calibrationReport,
  createGroupJudge,
  createJudgeDetector,
  type GroupJudge,
  type GroupVerdict,
  JUDGE_DETECTOR_ID,
  type JudgeBudget,
  type JudgeClient,
  type JudgeDetector,
  JudgeQueue,
  judgeMessages,
  MinuteWindow,
  memoryJudgeCache,
  openAIJudgeClient,
  parseJudgeReply,
  parseRubric,
  type Rubric,
  taskAnswerTrace,
} from "./judge/index.ts";
// schemas/: bounds on the JSON schemas and regexes tenants send.
export {
  linearRegExp,
  patternsProblem,
  runWithin,
  SCHEMA_BOUNDS,
  TenantSchemas,
} from "./schemas/index.ts";
// stats/: exact tests on proportions.
export { proportionChangePValues } from "./stats/index.ts";
// synth/: EvalSet, PromptPool and PreferenceSet builders.
export {
  buildEvalSet,
  buildPreferenceSet,
  buildPromptPool,
  type ChosenCandidate,
  type ContentImage,
  candidatesFromFeedback,
  type Dataset,
  type DatasetKind,
  type EvalRow,
  extractInlineImages,
  type FailureItem,
  failureItemFromTrace,
  IMAGE_REF_PREFIX,
  imageRefs,
  inlineImages,
  type Lineage,
  type PreferenceRow,
  type PromptRow,
  questionsOf,
  sha256,
} from "./synth/index.ts";
// tasks/: the TaskFamily interface and what families share.
export {
  createRng,
  type DatasetRow,
  deriveSeed,
  drawInSplit,
  type FamilySession,
  type FamilySessionStep,
  type FamilyTool,
  formatToolCall,
  type JsonSchema,
  offeredTools,
  parseToolCall,
  type Split,
  type TaskFamily,
  type TaskGenerateOptions,
  taskId,
  taskToRow,
  toOpenAiTools,
  validateJsonSchema,
} from "./tasks/index.ts";
// teach/: the run-time teaching protocol, its reward, NDR monitor and metrics.
export {
  AdaptiveTeachingRewardConfig,
  type AdaptiveTeachingRewardConfigInput,
  adaptiveTeachingReward,
  adaptiveTeachingRewardConfig,
  approximateTokenCounter,
  type ChatCompletion,
  type ChatModel,
  type CompleteOptions,
  type Diagnosis,
  EngineChatModel,
  type EngineChatModelOptions,
  findAnswerLeaks,
  type NdrDecision,
  NdrMonitor,
  NdrMonitorConfig,
  type ProbeJudgement,
  parseStudentOutput,
  parseTeacherOutput,
  renderTemplate,
  runTeaching,
  solutionAnswers,
  type TeachingMetrics,
  type TeachingMode,
  TeachingOutcome,
  type TeachingRun,
  TeachingTemplates,
  type TeachingTemplatesInput,
  type TeachMessage,
  type TokenCounter,
  teachingMetrics,
  teachingMetricsBy,
  teachingTemplates,
  toTraceSteps,
  truncateProbe,
  type UngroundedClaims,
  type Verify,
  wilsonInterval,
} from "./teach/index.ts";
// validate/: candidate-vs-production decisions: binomial tests, gates, the safety and general slices.
export {
  builtinSafetySlice,
  decideValidation,
  GeneralItem,
  generalMessages,
  holmBonferroni,
  judgeGeneral,
  judgeSafety,
  MIN_COUNTED_GENERAL_ITEMS,
  type ModelOutcome,
  type SafetyItem,
  type SliceReport,
  ValidationGates,
  type ValidationGatesInput,
  type ValidationItem,
  type ValidationReport,
} from "./validate/index.ts";
// verify/: the Verifier interface and value normalization.
export {
  fail,
  normalizedEqual,
  PASS,
  unknown,
  type Verifier,
  type VerifyInput,
  type VerifyResult,
} from "./verify/index.ts";
