import { formatToolCall } from "../../tasks/tool-spec.ts";
import { defineTaskFamily } from "../define-task-family.ts";
import { type ArithSolution, generateArithTasks } from "./arith-tasks.ts";
import { calculator } from "./calculator.ts";
import { verifyArith } from "./verify-arith.ts";

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
