export { DetectionConfig, type DetectionConfigInput } from "./detection-config.ts";
export type { DetectContext, Detector } from "./detector.ts";
export {
  BUILTIN_DETECTORS,
  CLASS_PRIORITY,
  DetectorRegistry,
  type Judgement,
  primaryVerdict,
} from "./detector-registry.ts";
export { emptyOutputDetector } from "./empty-output-detector.ts";
export { errorSignature } from "./error-signature.ts";
export { feedbackDetector } from "./feedback-detector.ts";
export { latencyDetector } from "./latency-detector.ts";
export { malformedArgumentsDetector } from "./malformed-arguments-detector.ts";
export { modelErrorDetector } from "./model-error-detector.ts";
export { refusalDetector } from "./refusal-detector.ts";
export { type SolutionResolver, solutionsByQuestion } from "./solution-resolver.ts";
export { toolErrorDetector } from "./tool-error-detector.ts";
export { toolLoopDetector } from "./tool-loop-detector.ts";
export { toolSchemaDetector } from "./tool-schema-detector.ts";
export {
  llmSteps,
  type ModelTurn,
  modelTurns,
  toolCallArguments,
  toolCallText,
  toolNameIn,
  traceLatencyMs,
  traceModelVersion,
  traceQuestion,
  traceSolution,
} from "./trace-view.ts";
export { truncationDetector } from "./truncation-detector.ts";
export {
  type Evidence,
  type FailureClass,
  type FailureFinding,
  failedVerdict,
  passedVerdict,
  type Severity,
  unknownVerdict,
  type Verdict,
} from "./verdict.ts";
export { verifierDetector } from "./verifier-detector.ts";
