/**
 * A multi-turn task family written against the plugin API only (`@arc/core`), as a user writes one outside Arc:
 * two tools called in turn. The agent looks up the factor between two units (`get_factor`), then converts with it
 * (`convert`). Registered by path in tests (`loadTaskFamilies`); nothing in Arc imports it.
 */
import {
  createRng,
  defineTaskFamily,
  deriveSeed,
  type FamilySession,
  type FamilyTool,
  fail,
  formatToolCall,
  PASS,
  parseToolCall,
  type TaskGenerateOptions,
  taskId,
  type Verifier,
} from "@arc/core";

/** The unit pairs the desk knows, with the factor from the first to the second. */
const FACTORS: Record<string, number> = { "km:mi": 0.621, "kg:lb": 2.205, "m:ft": 3.281, "l:gal": 0.264 };

/** What a right episode calls: the factor's units, then the value to convert. */
export interface RateConvertSolution {
  from: string;
  to: string;
  value: number;
}

const TOOLS: FamilyTool[] = [
  {
    name: "get_factor",
    description: "The factor that converts one unit into another.",
    parameters: {
      type: "object",
      properties: { from: { type: "string" }, to: { type: "string" } },
      required: ["from", "to"],
    },
  },
  {
    name: "convert",
    description: "Multiplies a value by a factor.",
    parameters: {
      type: "object",
      properties: { value: { type: "number" }, factor: { type: "number" } },
      required: ["value", "factor"],
    },
  },
];
const SCHEMAS = Object.fromEntries(TOOLS.map((t) => [t.name, t.parameters]));

function generate(options: TaskGenerateOptions) {
  const rng = createRng(deriveSeed(options.seed, `rate-convert:${options.split}`));
  return Array.from({ length: options.count }, (_, i) => {
    const [from, to] = rng.pick(Object.keys(FACTORS)).split(":");
    const value = rng.int(1, 99);
    return {
      id: taskId("rate-convert", options.split, options.seed, i),
      env: "rate-convert",
      question: `Convert ${value} ${from} to ${to}.`,
      solution: { from, to, value } satisfies RateConvertSolution,
    };
  });
}

/** The two calls of a right episode. */
function referenceCalls(solution: RateConvertSolution) {
  const factor = FACTORS[`${solution.from}:${solution.to}`];
  return [
    { tool: "get_factor", args: { from: solution.from, to: solution.to } },
    { tool: "convert", args: { value: solution.value, factor } },
  ];
}

/** Passes an episode whose two turns make the reference calls in order; names the first turn that does not. */
const verify: Verifier = ({ outputs, solution }) => {
  for (const [turn, expected] of referenceCalls(solution as RateConvertSolution).entries()) {
    const parsed = parseToolCall(outputs[turn] ?? "");
    if (!parsed.ok) return fail({ class: "parse_error", message: parsed.error, turn });
    if (parsed.call.tool !== expected.tool)
      return fail({ class: "wrong_tool", message: `expected ${expected.tool}`, turn });
    const args: Record<string, unknown> = expected.args;
    const wrong = Object.keys(args).find((key) => parsed.call.args[key] !== args[key]);
    if (wrong) return fail({ class: "wrong_argument", message: `${wrong}: expected ${args[wrong]}`, turn });
  }
  return PASS;
};

/** Turns an episode may take: the two calls and one turn of slack. */
const MAX_TURNS = 3;

/**
 * The desk as a state machine: a factor lookup answers the factor, anything else but a conversion answers an error
 * to read, and a conversion (or the turn limit) ends the episode.
 */
function session(task: { solution?: unknown }, options?: { maxTurns?: number }): FamilySession {
  const solution = task.solution as RateConvertSolution;
  const maxTurns = options?.maxTurns ?? MAX_TURNS;
  let turns = 0;
  const state = { done: false };
  const answer = (observation: unknown, ends: boolean) => {
    state.done = ends || turns >= maxTurns;
    return { observation: JSON.stringify(observation), done: state.done };
  };
  return {
    get done() {
      return state.done;
    },
    act(output) {
      turns++;
      const parsed = parseToolCall(output);
      if (!parsed.ok) return answer({ error: parsed.error }, false);
      const { tool, args } = parsed.call;
      if (tool === "get_factor") return answer({ factor: FACTORS[`${args.from}:${args.to}`] ?? null }, false);
      if (tool !== "convert") return answer({ error: `no tool ${tool}` }, false);
      return answer({ result: Number(args.value) * Number(args.factor), of: solution.value }, true);
    },
  };
}

export default defineTaskFamily({
  env: "rate-convert",
  description: "look up a conversion factor, then convert with it (two tools in turn)",
  ability: "tool_use",
  tools: TOOLS,
  generate,
  prompt: (task) => [{ role: "user", content: task.question }],
  reference: (task) =>
    referenceCalls(task.solution as RateConvertSolution).map((call) => formatToolCall(call, SCHEMAS)),
  verify,
  session,
});
