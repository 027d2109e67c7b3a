export {
  type ArithSolution,
  arithFamily,
  calculator,
  evaluateExpression,
  generateArithTasks,
  verifyArith,
} from "./arith/index.ts";
export { checkTaskFamily, defineTaskFamily } from "./define-task-family.ts";
export { JsonFamilySpec, jsonTaskFamily } from "./json-family.ts";
export {
  allowedAction,
  applyAction,
  generateOrderdeskTasks,
  ORDERDESK_ACTIONS,
  ORDERDESK_MAX_TURNS,
  ORDERDESK_TOOL_SCHEMAS,
  ORDERDESK_TOOLS,
  type Order,
  OrderdeskSession,
  type OrderdeskSolution,
  type OrderRequest,
  type OrderStatus,
  orderdeskFamily,
  type SessionStep,
  type TurnOutcome,
  verifyOrderdesk,
} from "./orderdesk/index.ts";
export { familyPrompt, generateTasks, TaskFamilyRegistry, taskPrompt } from "./registry.ts";
export { DEFAULT_BASE_MODEL, DEFAULT_ENV, getTaskFamily, taskFamilies } from "./task-families.ts";
export {
  addEvent,
  bookTable,
  CURRENCY_RATES,
  convertCurrency,
  generateToolcallTasks,
  getWeather,
  TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  TOOLCALL_TOOLS,
  type ToolcallSolution,
  toolcallConversionClaims,
  toolcallConversionKind,
  toolcallConversions,
  toolcallFamily,
  toolcallPartialCredit,
  toolcallRightApproachHint,
  toolcallTeachingHint,
  ungroundedToolcallConversions,
  verifyToolCall,
  verifyToolcall,
} from "./toolcall/index.ts";
export { verifyTask } from "./verify-task.ts";
