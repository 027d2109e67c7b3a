import {
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  readHfCheckpoint,
  renderChatExample,
  writeHfCheckpoint,
} from "@arc/engine";
import type { EngineFactory } from "../run/engine-factory.ts";

/**
 * The embedded engines (tfjs Llama) as an EngineFactory. It lives under `worker/` because only such files
 * may import @arc/engine from @arc/rl; the rollout worker thread uses it too.
 */
export const embeddedEngineFactory: EngineFactory = {
  trainEngine: (modelDir, settings, options) =>
    options?.resume
      ? EmbeddedTrainEngine.resume(modelDir, settings)
      : EmbeddedTrainEngine.fromCheckpoint(modelDir, settings),
  inferenceEngine: (modelDir, version) =>
    EmbeddedInferenceEngine.load(modelDir, { version, maxBatchSize: 32 }),
  async saveWeights(dir, weights, configDir) {
    if (weights.kind !== "tensors")
      throw new TypeError(`weights: expected in-memory tensors, got a ${weights.kind}`);
    const { config } = await readHfCheckpoint(configDir);
    await writeHfCheckpoint(dir, config, weights.tensors);
  },
  renderExample: renderChatExample,
};
