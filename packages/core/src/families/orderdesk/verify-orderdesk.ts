import { differingArgs, normalizedEqual } from "../../verify/normalize-value.ts";
import { fail, PASS, unknown, type Verifier, type VerifyResult } from "../../verify/verifier.ts";
import type { OrderdeskSolution } from "./orderdesk.ts";
import { OrderdeskSession } from "./orderdesk-session.ts";

/**
 * The `orderdesk` verifier: replays the outputs through the desk and checks the final state of the order,
 * and that the agent looked the order up before acting. Failures name the first turn at fault.
 */
export const verifyOrderdesk: Verifier = ({ outputs, solution }) => {
  if (outputs.length === 0) return unknown("no model output to judge");
  const expected = solution as OrderdeskSolution | undefined;
  if (!expected?.order) return unknown("no reference solution: the order and the request are not known");
  const session = new OrderdeskSession(expected, Math.max(outputs.length, 1));
  for (const output of outputs) {
    if (session.done) break;
    session.act(output);
  }
  return judge(session, expected);
};

function judge(session: OrderdeskSession, expected: OrderdeskSolution): VerifyResult {
  const turn = session.outcomes.length - 1;
  const last = session.outcomes[turn];
  if (last.kind === "parse_error")
    return fail({ class: "parse_error", path: "json", message: last.error, turn });
  if (last.kind === "schema_violation") {
    return fail({
      class: "schema_violation",
      path: `${last.tool ?? "(call)"}.${last.path}`,
      message: last.error,
      turn,
    });
  }
  const action = expected.calls[1];
  if (last.kind === "unknown_tool") {
    return fail({
      class: "wrong_tool",
      path: `${action.tool}→${last.tool}`,
      message: `unknown tool ${last.tool}`,
      turn,
    });
  }
  const made = session.calls.find((c) => c.tool !== "lookup_order");
  if (!made) {
    return fail({
      class: "incomplete",
      path: "orderdesk.no_action",
      message: `no action after ${session.outcomes.length} turns`,
      turn,
    });
  }
  if (session.actedBeforeLookup) {
    return fail({
      class: "wrong_tool",
      path: "orderdesk.lookup_order",
      message: `called ${made.tool} before lookup_order`,
      turn,
    });
  }
  if (made.tool !== action.tool) {
    return fail({
      class: "wrong_tool",
      path: `${action.tool}→${made.tool}`,
      message: `expected ${action.tool}, got ${made.tool}`,
      expected: action.tool,
      actual: made.tool,
      turn,
    });
  }
  const key = differingArgs(action.args, made.args)[0];
  if (key) {
    return fail({
      class: "wrong_argument",
      path: `${made.tool}.${key}`,
      message: `expected ${key}=${JSON.stringify(action.args[key])}, got ${JSON.stringify(made.args[key])}`,
      expected: action.args[key],
      actual: made.args[key],
      turn,
    });
  }
  if (!normalizedEqual(session.state, expected.finalState)) {
    return fail({
      class: "wrong_answer",
      path: "orderdesk.final_state",
      message: "the order did not end in the expected state",
      expected: expected.finalState,
      actual: session.state,
      turn,
    });
  }
  return PASS;
}
