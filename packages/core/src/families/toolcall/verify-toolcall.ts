import { validateJsonSchema } from "../../tasks/json-schema.ts";
import { parseToolCall } from "../../tasks/parse-tool-call.ts";
import type { ToolCallJson, ToolSpec } from "../../tasks/tool-spec.ts";
import { differingArgs, normalizedEqual } from "../../verify/normalize-value.ts";
import { fail, PASS, unknown, type Verifier, type VerifyResult } from "../../verify/verifier.ts";
import { TOOLCALL_TOOLS } from "./toolcall-tools.ts";

/**
 * Judges one JSON tool call against a set of tools, in the order a person would: does it parse, is it the
 * right tool, do its arguments match the tool's schema, does the tool run, are the arguments right (normalized),
 * and, when arguments differ in form, does running it give the same result as the reference call.
 */
export function verifyToolCall(
  output: string,
  tools: readonly ToolSpec[],
  expected?: ToolCallJson,
): VerifyResult {
  const parsed = parseToolCall(output);
  if (!parsed.ok) {
    return parsed.stage === "json"
      ? fail({ class: "parse_error", path: "json", message: parsed.error, actual: output })
      : fail({ class: "schema_violation", path: "(call)", message: parsed.error, actual: output });
  }
  const { call } = parsed;
  const tool = tools.find((t) => t.name === call.tool);
  if (!tool) {
    return fail({
      class: "wrong_tool",
      path: expected ? `${expected.tool}→${call.tool}` : `unknown:${call.tool}`,
      message: `unknown tool ${JSON.stringify(call.tool)}`,
      expected: expected?.tool,
      actual: call.tool,
    });
  }
  if (expected && expected.tool !== call.tool) {
    return fail({
      class: "wrong_tool",
      path: `${expected.tool}→${call.tool}`,
      message: `expected tool ${expected.tool}, got ${call.tool}`,
      expected: expected.tool,
      actual: call.tool,
    });
  }
  const issue = validateJsonSchema(call.args, tool.parameters)[0];
  if (issue?.unchecked) return unknown(`${tool.name}.${issue.path} ${issue.message}`);
  if (issue) {
    return fail({
      class: "schema_violation",
      path: `${tool.name}.${issue.path}`,
      message: `${issue.path} ${issue.message}`,
      actual: call.args,
    });
  }
  const result = tool.execute(call.args);
  if (!result.ok)
    return fail({ class: "execution_error", path: tool.name, message: result.error, actual: call.args });
  if (!expected)
    return unknown(
      "no reference solution: the call is well-formed and runs, but its values cannot be checked",
    );
  const differing = differingArgs(expected.args, call.args);
  if (differing.length === 0) return PASS;
  const reference = tool.execute(expected.args);
  if (reference.ok && normalizedEqual(reference.value, result.value)) return PASS;
  const key = differing[0];
  return fail({
    class: "wrong_argument",
    path: `${tool.name}.${key}`,
    message: `expected ${key}=${JSON.stringify(expected.args[key])}, got ${JSON.stringify(call.args[key])}`,
    expected: expected.args[key],
    actual: call.args[key],
  });
}

/** The `toolcall` verifier: the last output must be the reference tool call. */
export const verifyToolcall: Verifier = ({ outputs, solution }) => {
  const output = outputs.at(-1);
  if (output === undefined) return unknown("no model output to judge");
  return verifyToolCall(output, TOOLCALL_TOOLS, solution as ToolCallJson | undefined);
};
