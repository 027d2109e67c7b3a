import type { Task } from "../../rollout/index.ts";
import { parseToolCall } from "../../tasks/parse-tool-call.ts";
import { differingArgs } from "../../verify/normalize-value.ts";
import type { VerifyResult } from "../../verify/verifier.ts";
import { type ToolcallSolution, toolcallConversions } from "./toolcall-tasks.ts";

/**
 * The guided-student prompt of `toolcall`: the hint first, then the request, so the values the call copies stay as
 * close to the answer as in the unguided prompt. A ~1M-parameter student copies over a short distance only: trained
 * on the default template (request, hint, solve instruction), the same student passed 0 of 106 third-phrasing
 * requests with the conversions hinted, 0.15 without; trained on this one, 0.23 with them, 0.20 without.
 */
export const TOOLCALL_GUIDED_STUDENT_TEMPLATE = "Hint: {teaching}\n{question}";

/** The conversions the request leaves to the reader ("March is month 03; 3pm is hour 15."), empty when none. */
export function toolcallRightApproachHint(task: Task): string {
  const facts = toolcallConversions(task);
  return facts.length === 0 ? "" : `${facts.join("; ")}.`;
}

/** Which tool, which argument names and the request's conversions: guidance that does not write the call. */
export function toolcallTeachingHint(task: Task): string {
  const call = task.solution as ToolcallSolution;
  const method = `Call the tool ${call.tool} with the arguments ${Object.keys(call.args).join(", ")}, taken from the request.`;
  const conversions = toolcallRightApproachHint(task);
  return conversions === "" ? method : `${method} ${conversions}`;
}

/** Share of the solution's arguments that the output's call gets right (0 when it does not parse). */
function argShare(task: Task, output: string): number {
  const parsed = parseToolCall(output);
  const expected = task.solution as ToolcallSolution | undefined;
  if (!parsed.ok || !expected?.args) return 0;
  const keys = Object.keys(expected.args).length;
  return keys === 0 ? 0 : 1 - differingArgs(expected.args, parsed.call.args).length / keys;
}

/** A wrong argument with the right tool earns more the more arguments are right; other failures the generic credit. */
export function toolcallPartialCredit(task: Task, output: string, verdict: VerifyResult): number | undefined {
  return verdict.failure?.class === "wrong_argument" ? 0.4 + 0.5 * argShare(task, output) : undefined;
}
