import { validateJsonSchema } from "../../tasks/json-schema.ts";
import { parseToolCall } from "../../tasks/parse-tool-call.ts";
import { fail, PASS, unknown, type Verifier } from "../../verify/verifier.ts";
import type { ArithSolution } from "./arith-tasks.ts";
import { calculator } from "./calculator.ts";

/**
 * The `arith` verifier: the last output is a `calc` call whose result (or a direct `{"answer": n}`)
 * must equal the reference answer.
 */
export const verifyArith: Verifier = ({ outputs, solution }) => {
  const output = outputs.at(-1);
  if (output === undefined) return unknown("no model output to judge");
  const parsed = parseToolCall(output);
  let value: number;
  if (!parsed.ok) {
    const direct = parsed.value as { answer?: unknown } | undefined;
    if (parsed.stage === "json")
      return fail({ class: "parse_error", path: "json", message: parsed.error, actual: output });
    if (typeof direct?.answer !== "number") {
      return fail({ class: "schema_violation", path: "(call)", message: parsed.error, actual: output });
    }
    value = direct.answer;
  } else {
    const { call } = parsed;
    if (call.tool !== "calc") {
      return fail({
        class: "wrong_tool",
        path: `calc→${call.tool}`,
        message: `expected tool calc, got ${call.tool}`,
        actual: call.tool,
      });
    }
    const issue = validateJsonSchema(call.args, calculator.parameters)[0];
    if (issue)
      return fail({
        class: "schema_violation",
        path: `calc.${issue.path}`,
        message: `${issue.path} ${issue.message}`,
        actual: call.args,
      });
    const result = calculator.execute(call.args);
    if (!result.ok)
      return fail({ class: "execution_error", path: "calc", message: result.error, actual: call.args.expr });
    value = Number(result.value.result);
  }
  const expected = (solution as ArithSolution | undefined)?.answer;
  if (expected === undefined)
    return unknown("no reference answer: the calculation runs, but its value cannot be checked");
  if (Math.abs(value - expected) <= 1e-6 * Math.max(1, Math.abs(expected))) return PASS;
  return fail({
    class: "wrong_answer",
    path: "calc",
    message: `expected ${expected}, got ${value}`,
    expected,
    actual: value,
  });
};
