export { arithFamily } from "./arith-family.ts";
export { type ArithSolution, generateArithTasks } from "./arith-tasks.ts";
export { calculator, evaluateExpression } from "./calculator.ts";
export { verifyArith } from "./verify-arith.ts";
