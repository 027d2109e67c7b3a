/**
 * @arc/engine: the embedded Llama engine (inference, training, HF checkpoints, OpenAI-compatible server) and the
 * PyTorch engine (a Python worker driven over JSON lines).
 */
export { type BackendName, initBackend } from "./backend/tf-backend.ts";
export {
  byteTokenCounter,
  ChatModelError,
  EngineChatModel,
  type EngineChatModelOptions,
  OpenAIChatModel,
  type OpenAIChatModelOptions,
  tokenizerTokenCounter,
} from "./chat-model/index.ts";
export { CheckpointError } from "./checkpoint/checkpoint-error.ts";
export {
  readHfCheckpoint,
  type WriteCheckpointOptions,
  writeHfCheckpoint,
} from "./checkpoint/hf-checkpoint.ts";
export { mergeLoraCheckpoint } from "./checkpoint/lora-merge.ts";
export { type ImportedModel, type ImportModelOptions, importModel } from "./checkpoint/model-import.ts";
export {
  decodeSafetensors,
  encodeSafetensors,
  type NamedTensor,
  readSafetensors,
  type SafetensorsDtype,
  writeSafetensors,
} from "./checkpoint/safetensors.ts";
export {
  EmbeddedInferenceEngine,
  type InferenceEngineOptions,
} from "./inference/embedded-inference-engine.ts";
export {
  type RayJobDetails,
  type RayJobStatus,
  type RayJobSubmission,
  RayJobsClient,
  type RayJobsClientOptions,
  RayJobsError,
  TERMINAL_JOB_STATUSES,
} from "./jobs/ray-jobs-client.ts";
export { initWeights, mulberry32 } from "./model/llama.ts";
export {
  configForSize,
  type LlamaConfig,
  MODEL_SIZES,
  type ModelSize,
  parameterCount,
} from "./model/llama-config.ts";
export { type RemoteEngineOptions, RemoteInferenceEngine } from "./remote/remote-inference-engine.ts";
export { AdapterPool } from "./server/adapter-pool.ts";
export { parseChatRequest } from "./server/chat-request.ts";
export { type ChatRequestProblem, checkChatRequest } from "./server/chat-request-check.ts";
export { createEngineServer, type EngineServerOptions } from "./server/engine-server.ts";
export { OpenAIError } from "./server/openai-error.ts";
export { type RunningEngineServer, startEngineServer } from "./server/start-engine-server.ts";
export {
  decodeTokens,
  encodeText,
  SPECIAL_TOKENS,
  STOP_IDS,
  specialId,
  VOCAB_SIZE,
} from "./tokenizer/byte-tokenizer.ts";
export {
  CHAT_TEMPLATE_JINJA,
  type ChatMessage,
  renderChat,
  renderChatExample,
} from "./tokenizer/chat-template.ts";
export {
  type ChatTokenizer,
  loadChatTokenizer,
  type RenderOptions,
  type TemplateMessage,
} from "./tokenizer/chat-tokenizer.ts";
export {
  TORCH_WORKER_DIR,
  type TorchEngineInfo,
  type TorchEngineOptions,
  TorchInferenceEngine,
  TorchTrainEngine,
  type TorchTrainOptions,
  TorchWorker,
  TorchWorkerError,
  type TorchWorkerOptions,
  torchPython,
} from "./torch/index.ts";
export { EmbeddedTrainEngine, type TrainEngineOptions } from "./train/embedded-train-engine.ts";
export type { WireTensor, WorkerTraffic } from "./train/gradient-workers.ts";
export { LORA_TARGETS, type LoraOptions } from "./train/lora.ts";
