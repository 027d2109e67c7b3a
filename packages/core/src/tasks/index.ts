export { type ArithSolution, generateArithTasks } from "./arith.ts";
export { calculator, evaluateExpression } from "./calculator.ts";
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
export {
  allowedAction,
  applyAction,
  generateOrderdeskTasks,
  type Order,
  type OrderdeskSolution,
  type OrderRequest,
  type OrderStatus,
} from "./orderdesk.ts";
export {
  ORDERDESK_MAX_TURNS,
  OrderdeskSession,
  type SessionStep,
  type TurnOutcome,
} from "./orderdesk-session.ts";
export { ORDERDESK_ACTIONS, ORDERDESK_TOOL_SCHEMAS, ORDERDESK_TOOLS } from "./orderdesk-tools.ts";
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
export {
  generateToolcallTasks,
  type ToolcallSolution,
  toolcallConversionClaims,
  toolcallConversionKind,
  toolcallConversions,
  ungroundedToolcallConversions,
} from "./toolcall.ts";
export {
  addEvent,
  bookTable,
  CURRENCY_RATES,
  convertCurrency,
  getWeather,
  TOOLCALL_TOOLS,
} from "./toolcall-tools.ts";
