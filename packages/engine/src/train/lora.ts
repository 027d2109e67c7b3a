import { tf } from "../backend/tf-backend.ts";
import { mulberry32 } from "../model/llama.ts";
import type { LlamaConfig } from "../model/llama-config.ts";

/** The projections LoRA can adapt, by their HF module names. */
export const LORA_TARGETS = [
  "q_proj",
  "k_proj",
  "v_proj",
  "o_proj",
  "gate_proj",
  "up_proj",
  "down_proj",
] as const;

/** Low-rank adaptation (Hu et al. 2021): W' = W + (alpha / rank) * A B, with only A and B trained. */
export interface LoraOptions {
  rank: number;
  alpha: number;
  /** Projections to adapt (default q_proj and v_proj, as in the paper). */
  targets?: (typeof LORA_TARGETS)[number][];
}

/** The HF weight names of every adapted projection. */
export function loraWeightNames(config: LlamaConfig, options: LoraOptions): string[] {
  const targets = options.targets ?? ["q_proj", "v_proj"];
  for (const t of targets) {
    if (!(LORA_TARGETS as readonly string[]).includes(t)) {
      throw new TypeError(
        `lora.targets: expected names among ${LORA_TARGETS.join(", ")}, got ${JSON.stringify(t)}`,
      );
    }
  }
  if (!Number.isInteger(options.rank) || options.rank < 1) {
    throw new TypeError(`lora.rank: expected a positive integer, got ${options.rank}`);
  }
  const names: string[] = [];
  for (let i = 0; i < config.num_hidden_layers; i++) {
    for (const t of targets) {
      const module = t.endsWith("_proj") && ["q", "k", "v", "o"].includes(t[0]) ? "self_attn" : "mlp";
      names.push(`model.layers.${i}.${module}.${t}.weight`);
    }
  }
  return names;
}

/**
 * Fresh adapters for a weight held as [in, out]: A [in, r] uniform in +-1/sqrt(in) (PEFT's Kaiming-uniform
 * bound), B [r, out] zeros, so training starts exactly at the base model.
 */
export function initAdapter(weight: tf.Tensor, rank: number, seed: number): { a: tf.Tensor; b: tf.Tensor } {
  const [fanIn, fanOut] = weight.shape;
  const rand = mulberry32(seed);
  const bound = 1 / Math.sqrt(fanIn);
  const a = new Float32Array(fanIn * rank).map(() => (2 * rand() - 1) * bound);
  return { a: tf.tensor2d(a, [fanIn, rank]), b: tf.zeros([rank, fanOut]) };
}

/** W + scale * A B, in the engine's [in, out] layout. */
export function mergeAdapter(weight: tf.Tensor, a: tf.Tensor, b: tf.Tensor, scale: number): tf.Tensor {
  return tf.tidy(() => tf.add(weight, tf.mul(tf.matMul(a, b), scale)));
}
