import { type ArithSolution, generateArithTasks } from "../tasks/arith.ts";
import { calculator } from "../tasks/calculator.ts";
import { formatToolCall } from "../tasks/tool-spec.ts";
import { verifyArith } from "../verify/verify-arith.ts";
import { defineTaskFamily } from "./define-task-family.ts";

/** The `arith` family: word problem → a `calc` tool call whose result is the answer. */
export const arithFamily = defineTaskFamily({
  env: "arith",
  description: "a word problem answered by one calculator call",
  ability: "math",
  tools: [calculator],
  generate: generateArithTasks,
  prompt: (task) => [{ role: "user", content: task.question }],
  reference: (task) => [
    formatToolCall({ tool: "calc", args: { expr: (task.solution as ArithSolution).expr } }),
  ],
  verify: verifyArith,
});
