import type { WeightSource } from "@arc/core";
import { tf } from "../backend/tf-backend.ts";
import { CheckpointError } from "../checkpoint/checkpoint-error.ts";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import type { Weights } from "../model/llama.ts";
import { type LlamaConfig, parameterShapes } from "../model/llama-config.ts";
import { toEngineTensor } from "../model/weight-layout.ts";

/**
 * Float32 tensors by HF name, checked against the config (every weight present with its expected shape),
 * in the engine's layout. For inference a tied model gets `lm_head.weight` precomputed as embed^T.
 */
export function toWeights(
  config: LlamaConfig,
  tensors: Map<string, NamedTensor>,
  source = "weights",
): Weights {
  const out: Weights = {};
  for (const [name, shape] of parameterShapes(config)) {
    const t = tensors.get(name);
    if (!t)
      throw new CheckpointError(`${source}: missing tensor ${name} (expected shape [${shape.join(", ")}])`, {
        file: source,
        tensor: name,
      });
    if (t.shape.join(",") !== shape.join(",")) {
      throw new CheckpointError(
        `${source}: tensor ${name} has shape [${t.shape.join(", ")}], expected [${shape.join(", ")}]`,
        { file: source, tensor: name },
      );
    }
    out[name] = toEngineTensor(name, t);
  }
  if (config.tie_word_embeddings) out["lm_head.weight"] = tf.transpose(out["model.embed_tokens.weight"]);
  return out;
}

/** Resolves a WeightSource into tensors for `config` (a checkpoint must have the same architecture). */
export async function weightsFromSource(config: LlamaConfig, source: WeightSource): Promise<Weights> {
  if (source.kind === "tensors") return toWeights(config, source.tensors, "tensors");
  const loaded = await readHfCheckpoint(source.dir);
  for (const key of Object.keys(config) as (keyof LlamaConfig)[]) {
    if (loaded.config[key] !== config[key]) {
      throw new CheckpointError(
        `${source.dir}/config.json: ${key} is ${loaded.config[key]}, expected ${config[key]} (the engine's architecture)`,
        { file: `${source.dir}/config.json` },
      );
    }
  }
  return toWeights(config, loaded.tensors, source.dir);
}

/** Frees every tensor of a weight set. */
export function disposeWeights(weights: Weights): void {
  for (const t of Object.values(weights)) t.dispose();
}
