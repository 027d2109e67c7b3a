import { formatToolCall } from "../../tasks/tool-spec.ts";
import { defineTaskFamily } from "../define-task-family.ts";
import {
  TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  toolcallPartialCredit,
  toolcallRightApproachHint,
  toolcallTeachingHint,
} from "./toolcall-hints.ts";
import {
  generateToolcallTasks,
  type ToolcallSolution,
  ungroundedToolcallConversions,
} from "./toolcall-tasks.ts";
import { TOOLCALL_TOOLS } from "./toolcall-tools.ts";
import { verifyToolcall } from "./verify-toolcall.ts";

const TOOLCALL_SCHEMAS = Object.fromEntries(TOOLCALL_TOOLS.map((t) => [t.name, t.parameters]));

/** The `toolcall` family: request → `{"tool":"get_weather","args":{"city":"Paris","unit":"c"}}`. */
export const toolcallFamily = defineTaskFamily({
  env: "toolcall",
  description: "one tool call (weather, currency, calendar, restaurant) from a natural-language request",
  ability: "tool_use",
  tools: TOOLCALL_TOOLS,
  generate: generateToolcallTasks,
  prompt: (task) => [{ role: "user", content: task.question }],
  reference: (task) => [formatToolCall(task.solution as ToolcallSolution, TOOLCALL_SCHEMAS)],
  verify: verifyToolcall,
  ungroundedClaims: ungroundedToolcallConversions,
  teachingHint: toolcallTeachingHint,
  rightApproachHint: toolcallRightApproachHint,
  guidedTemplate: TOOLCALL_GUIDED_STUDENT_TEMPLATE,
  partialCredit: toolcallPartialCredit,
});
