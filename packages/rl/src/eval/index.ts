export { type EvalResult, type EvaluateOptions, evaluate } from "./evaluate.ts";
