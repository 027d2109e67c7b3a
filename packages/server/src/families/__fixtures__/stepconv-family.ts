/**
 * A multi-turn task family as a user writes it in their own project (the one `docs/task-families.md` shows): two
 * tools called in turn, `lookup_factor` then `answer`. Tests write these files to a folder outside the repository and
 * load them by path, so the text is kept here as the user's files.
 */

/** `factors.ts`, a module of the family's own folder that the family imports. */
export const FACTORS_TS = `export const FACTORS: Record<string, number> = { "mi>km": 1.609344, "kg>lb": 2.20462, "ft>m": 0.3048 };
`;

/** `stepconv.ts`: the family, importing Arc's types and helpers from \`@arc/core\`. */
export const STEPCONV_TS = `import {
  defineTaskFamily,
  type FamilySession,
  type FamilySessionStep,
  fail,
  formatToolCall,
  PASS,
  parseToolCall,
  type Task,
  type VerifyInput,
} from "@arc/core";
import { FACTORS } from "./factors.ts";

/** What a right episode does: look the factor of \`from>to\` up, then answer \`value × factor\`. */
interface Solution {
  value: number;
  from: string;
  to: string;
}

const TOOLS = [
  {
    name: "lookup_factor",
    description: "The factor that converts one unit into another.",
    parameters: {
      type: "object",
      properties: { from: { type: "string" }, to: { type: "string" } },
      required: ["from", "to"],
      additionalProperties: false,
    },
  },
  {
    name: "answer",
    description: "Give the converted value to the user.",
    parameters: {
      type: "object",
      properties: { value: { type: "number" } },
      required: ["value"],
      additionalProperties: false,
    },
  },
];

const expected = (s: Solution) => s.value * (FACTORS[\`\${s.from}>\${s.to}\`] ?? Number.NaN);

/** The episode's world: answers a lookup with the factor, ends on an answer, a bad call or the turn limit. */
class StepconvSession implements FamilySession {
  done = false;
  private turns = 0;
  constructor(private readonly maxTurns: number) {}

  act(output: string): FamilySessionStep {
    this.turns += 1;
    const parsed = parseToolCall(output);
    const step: FamilySessionStep = !parsed.ok
      ? { observation: JSON.stringify({ error: "invalid tool call" }), done: true }
      : parsed.call.tool === "lookup_factor"
        ? {
            observation: JSON.stringify({ factor: FACTORS[\`\${parsed.call.args.from}>\${parsed.call.args.to}\`] ?? null }),
            done: false,
            toolCall: parsed.call,
          }
        : { observation: JSON.stringify({ ok: parsed.call.tool === "answer" }), done: true, toolCall: parsed.call };
    this.done = step.done || this.turns >= this.maxTurns;
    return { ...step, done: this.done };
  }
}

/** Passes an episode that looked the factor up first and then answered within 0.1%. */
function verify({ outputs, solution }: VerifyInput) {
  const s = solution as Solution;
  const calls = outputs.map((o) => parseToolCall(o));
  const first = calls[0];
  if (!first?.ok) return fail({ class: "parse_error", message: "turn 0 is not a tool call", turn: 0 });
  if (first.call.tool !== "lookup_factor")
    return fail({ class: "wrong_tool", message: \`expected lookup_factor first, got \${first.call.tool}\`, turn: 0 });
  const last = calls.at(-1);
  if (calls.length < 2 || !last?.ok || last.call.tool !== "answer")
    return fail({ class: "incomplete", message: "the episode never answered", turn: calls.length - 1 });
  const value = Number(last.call.args.value);
  if (Math.abs(value - expected(s)) > 1e-3 * Math.abs(expected(s)))
    return fail({ class: "wrong_answer", message: \`expected \${expected(s)}, got \${value}\`, turn: calls.length - 1 });
  return PASS;
}

export default defineTaskFamily({
  env: "stepconv",
  description: "unit conversion in two steps: look the factor up, then answer",
  ability: "tool_use",
  tools: TOOLS,
  prompt: (task: Task) => [{ role: "user", content: task.question }],
  reference: (task: Task) => {
    const s = task.solution as Solution;
    return [
      formatToolCall({ tool: "lookup_factor", args: { from: s.from, to: s.to } }),
      formatToolCall({ tool: "answer", args: { value: expected(s) } }),
    ];
  },
  verify,
  session: (_task: Task, options?: { maxTurns?: number }) => new StepconvSession(options?.maxTurns ?? 3),
});
`;

/** The same family's first tool as a JSON family spec (judge only), for the `.json` path. */
export const STEPCONV_JSON = {
  env: "stepconv-json",
  tools: [{ name: "answer", description: "Give the value.", parameters: { type: "object" } }],
  verifier: "judge",
};
