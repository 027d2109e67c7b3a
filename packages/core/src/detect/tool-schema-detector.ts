import { Ajv, type ValidateFunction } from "ajv";
import type { Detector } from "./detector.ts";
import { llmSteps, toolCallArguments } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

const ajv = new Ajv({ allErrors: false, strict: false, validateSchema: false });

/** Compiled validators by schema text, the most recent kept (tenants' tools repeat from trace to trace). */
const validators = new Map<string, ValidateFunction | Error>();
const MAX_VALIDATORS = 512;

/** A validator of `schema`, or the Error that says why it cannot be compiled. */
function validatorOf(schema: unknown): ValidateFunction | Error {
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (validator === undefined) {
    try {
      validator = ajv.compile(schema as object);
    } catch (error) {
      validator = error as Error;
    }
    if (validators.size >= MAX_VALIDATORS) validators.delete(validators.keys().next().value as string);
    validators.set(key, validator);
  }
  return validator;
}

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
 * Checks every tool call against the JSON Schema of the `tools` recorded on its step (ajv), with the failing path as
 * evidence: a call of a tool that was not offered is `wrong_tool`, arguments that break its schema a
 * `schema_violation`. Arguments that are not JSON are the `malformed_tool_arguments` detector's; traces of an env with
 * a verifier are the verifier's.
 */
export const toolSchemaDetector: Detector = {
  id: "tool_schema",
  description: "a tool call breaks the schema of the tools offered on its step",
  detect(trace, context) {
    if (trace.env && context.verifierFor(trace.env)) return [];
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
        const validate = validatorOf(tool.parameters ?? { type: "object" });
        if (validate instanceof Error || validate(args)) continue;
        const [error] = validate.errors ?? [];
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
    return [];
  },
};
