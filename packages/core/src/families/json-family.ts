import { z } from "zod";
import { InvalidInputError } from "../errors/index.ts";
import { schemaBoundsProblem } from "../schemas/index.ts";
import type { JsonSchema } from "../tasks/json-schema.ts";
import { validateJsonSchema } from "../tasks/json-schema.ts";
import { parseToolCall } from "../tasks/parse-tool-call.ts";
import type { TaskFamily } from "../tasks/task-family.ts";
import { formatToolCall, type ToolCallJson } from "../tasks/tool-spec.ts";
import { normalizedEqual } from "../verify/normalize-value.ts";
import { fail, PASS, unknown, type Verifier } from "../verify/verifier.ts";

/**
 * How an argument of the expected call is compared: `exact` (JSON-equal), `normalized` (case, whitespace, dates,
 * times and numeric strings folded, as the built-in verifiers compare), `number` (within `tolerance`, relative to the
 * expected value) or `ignore`.
 */
const ArgumentCheck = z.enum(["exact", "normalized", "number", "ignore"]);

/** A task family given as data (JSON): tools, and how an answer is checked: a tool call's arguments, or a judge. */
export const JsonFamilySpec = z
  .object({
    env: z
      .string()
      .regex(/^[a-z][a-z0-9_-]{0,63}$/, "expected lowercase letters, digits, - and _ (at most 64)"),
    description: z.string().max(500).optional(),
    /** A system prompt put before each task's question. */
    system: z.string().max(20_000).optional(),
    tools: z
      .array(
        z
          .object({
            name: z.string().min(1).max(64),
            description: z.string().max(2_000).default(""),
            parameters: z.record(z.unknown()).superRefine((schema, ctx) => {
              const problem = schemaBoundsProblem(schema);
              if (problem) ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
            }),
          })
          .strict(),
      )
      .min(1)
      .max(64),
    /**
     * `judge`: no verifier (a judge scores answers). Else a tool-call check: a row's solution is the expected call
     * `{tool, args}`; the answer must call that tool, fit its schema, and match each argument by its check.
     */
    verifier: z
      .union([
        z.literal("judge"),
        z
          .object({
            arguments: z.record(ArgumentCheck).default({}),
            default: ArgumentCheck.default("normalized"),
            tolerance: z.number().nonnegative().default(1e-6),
          })
          .strict(),
      ])
      .default({}),
  })
  .strict();
export type JsonFamilySpec = z.infer<typeof JsonFamilySpec>;

/** Whether an answer's argument passes its check against the expected value. */
function argumentPasses(
  check: z.infer<typeof ArgumentCheck>,
  expected: unknown,
  actual: unknown,
  tolerance: number,
): boolean {
  if (check === "ignore") return true;
  if (check === "exact") return JSON.stringify(expected) === JSON.stringify(actual);
  if (check === "number") {
    return (
      typeof expected === "number" &&
      typeof actual === "number" &&
      Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected))
    );
  }
  return normalizedEqual(expected, actual);
}

/** The tool-call verifier a spec describes. */
function toolCallVerifier(spec: JsonFamilySpec, schemas: Record<string, JsonSchema>): Verifier {
  const rules = spec.verifier === "judge" ? undefined : spec.verifier;
  return ({ outputs, solution }) => {
    const parsed = parseToolCall(outputs[0] ?? "");
    if (!parsed.ok) return fail({ class: "parse_error", message: parsed.error });
    const { tool, args } = parsed.call;
    const schema = schemas[tool];
    if (!schema) {
      return fail({
        class: "wrong_tool",
        path: tool,
        message: `${tool} is not one of the family's tools`,
        actual: tool,
      });
    }
    const issue = validateJsonSchema(args, schema)[0];
    if (issue?.unchecked) return unknown(`${tool}.${issue.path} ${issue.message}`);
    if (issue)
      return fail({ class: "schema_violation", path: `${tool}.${issue.path}`, message: issue.message });
    const expected = solution as ToolCallJson | undefined;
    if (!expected) return unknown("no reference solution");
    if (tool !== expected.tool) {
      return fail({
        class: "wrong_tool",
        path: `${expected.tool}→${tool}`,
        message: `expected ${expected.tool}, got ${tool}`,
        expected: expected.tool,
        actual: tool,
      });
    }
    for (const [key, value] of Object.entries(expected.args ?? {})) {
      const check = rules?.arguments[key] ?? rules?.default ?? "normalized";
      if (!argumentPasses(check, value, args[key], rules?.tolerance ?? 0)) {
        return fail({
          class: "wrong_argument",
          path: `${tool}.${key}`,
          message: `${key}: expected ${JSON.stringify(value)}, got ${JSON.stringify(args[key])} (${check})`,
          expected: value,
          actual: args[key],
        });
      }
    }
    return PASS;
  };
}

/**
 * The task family a JSON spec describes: the system prompt (if any) and the question as its prompt, the expected
 * call as its reference, a tool-call verifier unless it is judge only. No task generator: its tasks come from
 * datasets. Throws an InvalidInputError naming `source` and the field for a bad spec.
 */
export function jsonTaskFamily(value: unknown, source = "family spec"): TaskFamily {
  const parsed = JsonFamilySpec.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".") || "(spec)";
    throw new InvalidInputError(`${source}: ${field}: ${issue.message}`, { field });
  }
  const spec = parsed.data;
  const schemas = Object.fromEntries(spec.tools.map((t) => [t.name, t.parameters as unknown as JsonSchema]));
  return {
    env: spec.env,
    ...(spec.description ? { description: spec.description } : {}),
    ability: "tool_use",
    tools: spec.tools.map((t) => ({ ...t, parameters: t.parameters as unknown as JsonSchema })),
    prompt: (task) => [
      ...(spec.system ? [{ role: "system" as const, content: spec.system }] : []),
      { role: "user", content: task.question },
    ],
    reference: (task) => {
      const call = task.solution as ToolCallJson | undefined;
      if (!call || typeof call.tool !== "string") {
        throw new InvalidInputError(`${spec.env}: the task's solution is not a {tool, args} call`, {
          field: "solution",
        });
      }
      return [formatToolCall(call, schemas)];
    },
    ...(spec.verifier === "judge" ? {} : { verify: toolCallVerifier(spec, schemas) }),
  };
}
