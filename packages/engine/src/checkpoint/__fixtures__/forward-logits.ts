import { tf } from "../../backend/tf-backend.ts";
import type { NamedTensor } from "../../checkpoint/safetensors.ts";
import { toWeights } from "../../inference/model-weights.ts";
import { attentionMask, forward, fuseForInference, ropeTables } from "../../model/llama.ts";
import type { LlamaConfig } from "../../model/llama-config.ts";

/**
 * Logits ([T * vocab], row-major) of one unpadded sequence through the engine's forward pass, with the training
 * weights (`train`) or the fused inference weights (`infer`), for tests that compare them with a reference.
 */
export function forwardLogits(
  config: LlamaConfig,
  tensors: Map<string, NamedTensor>,
  tokens: readonly number[],
  mode: "train" | "infer",
): Float32Array {
  const base = toWeights(config, tensors);
  const weights = mode === "infer" ? fuseForInference(config, base) : base;
  const T = tokens.length;
  const logits = tf.tidy(
    () =>
      forward(config, weights, ropeTables(config), {
        tokens: tf.tensor2d([...tokens], [1, T], "int32"),
        positions: tf.tensor2d(
          tokens.map((_, i) => i),
          [1, T],
          "int32",
        ),
        mask: attentionMask([new Array(T).fill(0)], 0, T),
        mode,
      }).logits,
  );
  const data = logits.dataSync() as Float32Array;
  logits.dispose();
  return data;
}
