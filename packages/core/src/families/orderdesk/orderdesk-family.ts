import { formatToolCall } from "../../tasks/tool-spec.ts";
import { defineTaskFamily } from "../define-task-family.ts";
import { generateOrderdeskTasks, type OrderdeskSolution } from "./orderdesk.ts";
import { ORDERDESK_MAX_TURNS, OrderdeskSession } from "./orderdesk-session.ts";
import { ORDERDESK_TOOLS } from "./orderdesk-tools.ts";
import { verifyOrderdesk } from "./verify-orderdesk.ts";

const ORDERDESK_SCHEMAS = Object.fromEntries(ORDERDESK_TOOLS.map((t) => [t.name, t.parameters]));

/** The `orderdesk` family: a multi-turn desk agent that must look up an order, then act on it. */
export const orderdeskFamily = defineTaskFamily({
  env: "orderdesk",
  description:
    "a multi-turn order desk: look the order up, then refund, cancel, change the address or decline",
  ability: "tool_use",
  tools: ORDERDESK_TOOLS,
  generate: generateOrderdeskTasks,
  prompt: (task) => [{ role: "user", content: task.question }],
  reference: (task) =>
    (task.solution as OrderdeskSolution).calls.map((call) => formatToolCall(call, ORDERDESK_SCHEMAS)),
  verify: verifyOrderdesk,
  session: (task, options) =>
    new OrderdeskSession(task.solution as OrderdeskSolution, options?.maxTurns ?? ORDERDESK_MAX_TURNS),
});
