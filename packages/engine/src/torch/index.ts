export { TorchInferenceEngine } from "./torch-inference-engine.ts";
export {
  type TorchEngineInfo,
  type TorchEngineOptions,
  TorchTrainEngine,
  type TorchTrainOptions,
} from "./torch-train-engine.ts";
export {
  TORCH_WORKER_DIR,
  TorchWorker,
  TorchWorkerError,
  type TorchWorkerOptions,
  torchPython,
} from "./torch-worker.ts";
