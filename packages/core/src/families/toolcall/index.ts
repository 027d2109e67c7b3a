export { toolcallFamily } from "./toolcall-family.ts";
export {
  TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  toolcallPartialCredit,
  toolcallRightApproachHint,
  toolcallTeachingHint,
} from "./toolcall-hints.ts";
export {
  generateToolcallTasks,
  type ToolcallSolution,
  toolcallConversionClaims,
  toolcallConversionKind,
  toolcallConversions,
  ungroundedToolcallConversions,
} from "./toolcall-tasks.ts";
export {
  addEvent,
  bookTable,
  CURRENCY_RATES,
  convertCurrency,
  getWeather,
  TOOLCALL_TOOLS,
} from "./toolcall-tools.ts";
export { verifyToolCall, verifyToolcall } from "./verify-toolcall.ts";
