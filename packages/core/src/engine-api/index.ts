export type {
  FinishReason,
  GenerateOptions,
  GenRequest,
  GenResult,
  InferenceEngine,
  Objective,
  StepMetrics,
  TokenBatch,
  TokenEvent,
  TrainBatch,
  TrainEngine,
  WeightSource,
} from "./types.ts";
