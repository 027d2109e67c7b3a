import {
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  initWeights,
  loadChatTokenizer,
  RemoteInferenceEngine,
  readHfCheckpoint,
  TorchInferenceEngine,
  TorchTrainEngine,
  tokenizerTokenCounter,
  writeHfCheckpoint,
} from "@arc/engine";
import type { EngineChoice, EngineFactory, TrainEngineSettings } from "../run/engine-factory.ts";

/** The torch worker's options for a recipe's engine block. */
function torchOptions(engine: EngineChoice) {
  const { cluster } = engine;
  return {
    device: engine.device,
    dtype: engine.dtype,
    processes: engine.processes,
    ray: cluster?.address
      ? { address: cluster.address, gpus: cluster.gpusPerWorker, cpus: cluster.cpusPerWorker }
      : undefined,
  };
}

/** The inference server a recipe's generator block names, with the run's starting weights pushed to it. */
function remoteEngine(modelDir: string, version: number, server: NonNullable<EngineChoice["server"]>) {
  const apiKey = server.apiKeyEnv ? process.env[server.apiKeyEnv] : undefined;
  if (server.apiKeyEnv && !apiKey)
    throw new Error(`generator.apiKeyEnv: the environment variable ${server.apiKeyEnv} is not set`);
  return RemoteInferenceEngine.connect({
    url: server.url as string,
    model: server.model,
    apiKey,
    modelDir,
    version,
    weightSync: server.weightSync,
    api: server.api,
  });
}

/**
 * The engines a recipe names (`engine.kind`): the embedded ones (tfjs Llama, in this process) or the PyTorch worker.
 * It lives under `worker/` because only such files may import @arc/engine from @arc/rl; the rollout worker thread
 * uses it too.
 */
export const engineFactory: EngineFactory = {
  trainEngine(modelDir, settings: TrainEngineSettings, options) {
    const { engine, trainThreads, ...optimizer } = settings;
    if (engine?.kind === "torch") {
      const torch = { ...optimizer, ...torchOptions(engine), threads: trainThreads, lora: engine.lora };
      return options?.resume
        ? TorchTrainEngine.resume(modelDir, torch)
        : TorchTrainEngine.fromCheckpoint(modelDir, torch);
    }
    const embedded = { ...optimizer, trainThreads, lora: engine?.lora };
    return options?.resume
      ? EmbeddedTrainEngine.resume(modelDir, embedded)
      : EmbeddedTrainEngine.fromCheckpoint(modelDir, embedded);
  },
  inferenceEngine(modelDir, version, engine) {
    if (engine?.server?.url) return remoteEngine(modelDir, version, engine.server);
    return engine?.kind === "torch"
      ? TorchInferenceEngine.load(modelDir, { ...torchOptions(engine), version })
      : EmbeddedInferenceEngine.load(modelDir, { version, maxBatchSize: 32 });
  },
  async saveWeights(dir, weights, configDir) {
    if (weights.kind !== "tensors")
      throw new TypeError(`weights: expected in-memory tensors, got a ${weights.kind}`);
    const { config } = await readHfCheckpoint(configDir);
    await writeHfCheckpoint(dir, config, weights.tensors, { tokenizerFrom: configDir });
  },
  async initModel(dir, size, seed) {
    const config = configForSize(size);
    await writeHfCheckpoint(dir, config, initWeights(config, seed));
  },
  async renderExample(modelDir) {
    const tokenizer = await loadChatTokenizer(modelDir);
    return (messages, reply, tools) => tokenizer.renderExample(messages, reply, tools ? { tools } : {});
  },
  async tokenCounter(modelDir) {
    return tokenizerTokenCounter(await loadChatTokenizer(modelDir));
  },
};
