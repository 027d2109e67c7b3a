export {
  allowedAction,
  applyAction,
  generateOrderdeskTasks,
  type Order,
  type OrderdeskSolution,
  type OrderRequest,
  type OrderStatus,
} from "./orderdesk.ts";
export { orderdeskFamily } from "./orderdesk-family.ts";
export {
  ORDERDESK_MAX_TURNS,
  OrderdeskSession,
  type SessionStep,
  type TurnOutcome,
} from "./orderdesk-session.ts";
export { ORDERDESK_ACTIONS, ORDERDESK_TOOL_SCHEMAS, ORDERDESK_TOOLS } from "./orderdesk-tools.ts";
export { verifyOrderdesk } from "./verify-orderdesk.ts";
