/**
 * A task family Arc has never seen: a unit-conversion agent with one tool, `convert_units`. It lives outside Arc's
 * packages and registers by path (`arc --family examples/unit-convert/family.ts ...`, ARC_FAMILIES, or a recipe's
 * `families` key); nothing in Arc imports it.
 */
import {
  createRng,
  defineTaskFamily,
  deriveSeed,
  drawInSplit,
  type FamilyTool,
  fail,
  formatToolCall,
  PASS,
  parseToolCall,
  type TaskGenerateOptions,
  taskId,
  unknown,
  type Verifier,
  validateJsonSchema,
} from "@arc/core";

/** The units the tool knows, by the dimension they measure. */
const UNITS = {
  length: ["m", "km", "cm", "ft", "in", "mi"],
  mass: ["kg", "g", "lb", "oz"],
  temperature: ["c", "f"],
};
const NAMES: Record<string, string> = {
  m: "meters",
  km: "kilometers",
  cm: "centimeters",
  ft: "feet",
  in: "inches",
  mi: "miles",
  kg: "kilograms",
  g: "grams",
  lb: "pounds",
  oz: "ounces",
  c: "degrees Celsius",
  f: "degrees Fahrenheit",
};
const ALL_UNITS = Object.values(UNITS).flat();

/** What a right answer calls: the value and the two units. */
export interface ConvertSolution {
  value: number;
  from: string;
  to: string;
}

const CONVERT_UNITS: FamilyTool = {
  name: "convert_units",
  description: "Convert a quantity from one unit to another of the same dimension.",
  parameters: {
    type: "object",
    properties: {
      value: { type: "number" },
      from: { type: "string", enum: ALL_UNITS },
      to: { type: "string", enum: ALL_UNITS },
    },
    required: ["value", "from", "to"],
    additionalProperties: false,
  },
};
const SCHEMAS = { convert_units: CONVERT_UNITS.parameters };

const TEMPLATES = [
  (v: number, a: string, b: string) => `Convert ${v} ${NAMES[a]} to ${NAMES[b]}.`,
  (v: number, a: string, b: string) => `How many ${NAMES[b]} is ${v} ${NAMES[a]}?`,
  (v: number, a: string, b: string) => `What is ${v} ${NAMES[a]} in ${NAMES[b]}?`,
];

function generate(options: TaskGenerateOptions) {
  const rng = createRng(deriveSeed(options.seed, `unitconv:${options.split}`));
  return Array.from({ length: options.count }, (_, i) => {
    const drawn = drawInSplit(options.split, () => {
      const units = rng.pick(Object.values(UNITS));
      const from = rng.pick(units);
      const to = rng.pick(units.filter((u) => u !== from));
      const value = rng.chance(0.3) ? rng.int(1, 99) + rng.int(1, 9) / 10 : rng.int(1, 500);
      return { question: rng.pick(TEMPLATES)(value, from, to), solution: { value, from, to } };
    });
    return {
      id: taskId("unitconv", options.split, options.seed, i),
      env: "unitconv",
      question: drawn.question,
      solution: drawn.solution,
      meta: { split: options.split },
    };
  });
}

/** Passes one `convert_units` call with the task's value and units; names the first thing that differs. */
const verify: Verifier = ({ outputs, solution }) => {
  const parsed = parseToolCall(outputs[0] ?? "");
  if (!parsed.ok) return fail({ class: "parse_error", message: parsed.error });
  const { tool, args } = parsed.call;
  if (tool !== "convert_units") {
    return fail({
      class: "wrong_tool",
      path: tool,
      message: `expected convert_units, got ${tool}`,
      actual: tool,
    });
  }
  const issue = validateJsonSchema(args, CONVERT_UNITS.parameters)[0];
  if (issue) {
    return fail({ class: "schema_violation", path: `convert_units.${issue.path}`, message: issue.message });
  }
  const expected = solution as ConvertSolution | undefined;
  if (!expected) return unknown("no reference solution");
  for (const key of ["value", "from", "to"] as const) {
    if (args[key] !== expected[key]) {
      return fail({
        class: "wrong_argument",
        path: `convert_units.${key}`,
        message: `${key}: expected ${JSON.stringify(expected[key])}, got ${JSON.stringify(args[key])}`,
        expected: expected[key],
        actual: args[key],
      });
    }
  }
  return PASS;
};

export default defineTaskFamily({
  env: "unitconv",
  description: "a unit conversion (length, mass, temperature) by one convert_units call",
  ability: "tool_use",
  tools: [CONVERT_UNITS],
  generate,
  prompt: (task) => [{ role: "user", content: task.question }],
  reference: (task) => [
    formatToolCall({ tool: "convert_units", args: { ...(task.solution as ConvertSolution) } }, SCHEMAS),
  ],
  verify,
});
