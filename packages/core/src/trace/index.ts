export { toInvalidInputError } from "./format-zod-error.ts";
export { parseTraceBatch } from "./parse-trace-batch.ts";
export {
  ChatMessage,
  Feedback,
  LlmCall,
  RecordId,
  Step,
  StepError,
  StepKind,
  ToolCall,
  Trace,
  TraceBatch,
  type TraceInput,
  Usage,
} from "./schema.ts";
