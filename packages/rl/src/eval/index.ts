export {
  type EvalResult,
  type EvaluateOptions,
  evaluate,
  type SampledPassOptions,
  type SampledPassResult,
  sampledPassRate,
} from "./evaluate.ts";
