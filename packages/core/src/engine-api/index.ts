export type {
  FinishReason,
  GenRequest,
  GenResult,
  InferenceEngine,
  Objective,
  StepMetrics,
  TokenBatch,
  TrainBatch,
  TrainEngine,
  WeightSource,
} from "./types.ts";
