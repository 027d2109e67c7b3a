export {
  type DatasetRow,
  DatasetRowSchema,
  readDatasetJsonl,
  rowToTask,
  taskToRow,
  writeDatasetJsonl,
} from "./dataset-row.ts";
export { DEFAULT_YEAR, formatDateLong, formatTime12, parseDate, parseTime } from "./dates.ts";
export { type JsonSchema, type SchemaIssue, validateJsonSchema } from "./json-schema.ts";
export { type OpenAiToolCall, offeredToolCall, offeredToolNames, offeredTools } from "./offered-tools.ts";
export { type ParsedToolCall, parseToolCall } from "./parse-tool-call.ts";
export { createRng, deriveSeed, fnv1a, type Rng } from "./rng.ts";
export { SPLITS, type Split } from "./split.ts";
export {
  type ChatTurn,
  drawInSplit,
  type FamilySession,
  type FamilySessionStep,
  type FamilyTool,
  inSplit,
  type TaskFamily,
  type TaskGenerateOptions,
  taskId,
} from "./task-family.ts";
export {
  formatToolCall,
  type ToolCallJson,
  type ToolResult,
  type ToolSpec,
  toOpenAiTools,
} from "./tool-spec.ts";
