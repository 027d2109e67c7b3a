export { compileJsonReader, type JsonReader, notAccepted } from "./compile-json-reader.ts";
export { toInvalidInputError } from "./format-zod-error.ts";
export {
  checkJsonDepth,
  checkJsonValue,
  DEFAULT_JSON_LIMITS,
  type JsonLimits,
  type JsonValueChecks,
  type LoneSurrogatePolicy,
  mayHoldLoneSurrogates,
  parseBoundedJson,
} from "./json-bounds.ts";
export { refuseUnknownKeys } from "./known-keys.ts";
export { parseFeedbackBatch, parseTraceBatch } from "./parse-trace-batch.ts";
export {
  ChatMessage,
  Feedback,
  LlmCall,
  RecordId,
  Step,
  StepError,
  StepKind,
  Timestamp,
  ToolCall,
  Trace,
  TraceBatch,
  type TraceInput,
  Usage,
} from "./schema.ts";
