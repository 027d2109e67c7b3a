import { SCHEMA_BOUNDS, TimeBudget } from "../schemas/index.ts";
import type { Detector } from "./detector.ts";
import { llmSteps, toolCallArguments } from "./trace-view.ts";
import { failedVerdict, unknownVerdict, type Verdict } from "./verdict.ts";

/** The `function` of each tool recorded on a step, by name. */
function toolsByName(tools: readonly Record<string, unknown>[]): Map<string, { parameters?: unknown }> {
  const byName = new Map<string, { parameters?: unknown }>();
  for (const tool of tools) {
    const fn = tool.function as { name?: unknown; parameters?: unknown } | undefined;
    if (typeof fn?.name === "string") byName.set(fn.name, fn);
  }
  return byName;
}

/**
 * Checks every tool call against the JSON Schema of the `tools` recorded on its step (Ajv, one instance per schema of
 * the tenant's, within SCHEMA_BOUNDS), with the failing path as evidence: a call of a tool that was not offered is
 * `wrong_tool`, arguments that break its schema a `schema_violation`. A schema that cannot be checked (out of its
 * bounds, not compilable, its check out of time) gives an `unknown` verdict that says why. Arguments that are not
 * JSON are the `malformed_tool_arguments` detector's; traces of an env with a verifier are the verifier's.
 */
export const toolSchemaDetector: Detector = {
  id: "tool_schema",
  description: "a tool call breaks the schema of the tools offered on its step",
  detect(trace, context) {
    if (trace.env && context.verifierFor(trace.env)) return [];
    const budget = new TimeBudget(SCHEMA_BOUNDS.traceMs);
    let unchecked: Verdict | undefined;
    for (const step of llmSteps(trace)) {
      const calls = step.llm?.output?.toolCalls ?? [];
      if (calls.length === 0 || !step.llm?.tools) continue;
      const offered = toolsByName(step.llm.tools);
      for (const call of calls) {
        const name = call.function.name;
        const tool = offered.get(name);
        if (!tool) {
          return [
            failedVerdict(trace.id, "tool_schema", {
              class: "wrong_tool",
              severity: "high",
              message: `the model called ${name}, which was not among the tools offered (${[...offered.keys()].join(", ")})`,
              stepId: step.id,
              path: name,
              signature: `tool not offered: ${name}`,
              actual: name,
            }),
          ];
        }
        const args = toolCallArguments(call.function.arguments);
        if (args === undefined) continue;
        const check = context.schemas.check(tool.parameters ?? { type: "object" }, args, budget);
        if (check.status === "valid") continue;
        if (check.status === "unchecked") {
          unchecked ??= unknownVerdict(
            trace.id,
            "tool_schema",
            `the arguments of ${name} could not be checked against its schema: ${check.reason}`,
            step.id,
          );
          continue;
        }
        const { error } = check;
        const path = `${name}.arguments${error?.instancePath ?? ""}`;
        return [
          failedVerdict(trace.id, "tool_schema", {
            class: "schema_violation",
            severity: "medium",
            message: `${path} ${error?.message ?? "breaks the tool's schema"}`,
            stepId: step.id,
            path,
            signature: `${name}${error?.instancePath ?? ""} ${error?.keyword ?? "schema"}`,
            expected: error?.params,
            actual: call.function.arguments,
          }),
        ];
      }
    }
    return unchecked ? [unchecked] : [];
  },
};
