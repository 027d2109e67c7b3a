import { VOCAB_SIZE } from "../tokenizer/byte-tokenizer.ts";
import type { RopeScaling } from "./rope-scaling.ts";

/** Architecture hyper-parameters, with the field names of HF `config.json` (LlamaConfig / Qwen2Config). */
export interface LlamaConfig {
  /** `LlamaForCausalLM`, or `Qwen2ForCausalLM` (Llama with q/k/v biases). */
  architecture: "LlamaForCausalLM" | "Qwen2ForCausalLM";
  /** Rows of the embedding and of the output head. */
  vocab_size: number;
  /** Model width d. */
  hidden_size: number;
  /** Width of the SwiGLU MLP. */
  intermediate_size: number;
  num_hidden_layers: number;
  /** Query heads; hidden_size / num_attention_heads is the head width (even, for RoPE). */
  num_attention_heads: number;
  /** Fewer than `num_attention_heads` means grouped-query attention. */
  num_key_value_heads: number;
  /** Longest sequence the RoPE tables cover. */
  max_position_embeddings: number;
  /** Added to the mean square in RMSNorm. */
  rms_norm_eps: number;
  /** RoPE base: frequencies are theta^(-2i/D). */
  rope_theta: number;
  /** Frequency scaling for long contexts (Llama 3, YaRN, linear); absent for plain RoPE. */
  rope_scaling?: RopeScaling;
  /** When true the output projection reuses `model.embed_tokens.weight` (no `lm_head.weight`). */
  tie_word_embeddings: boolean;
  /** q/k/v projections carry biases (true for Qwen2). */
  attention_bias: boolean;
}

/** The model zoo: sizes that train and serve on a 2-core CPU. */
export type ModelSize = "tiny" | "small" | "base";

/** Zoo sizes; `small` (~1M parameters) is the demo size. */
export const MODEL_SIZES: Record<ModelSize, Omit<LlamaConfig, "architecture" | "vocab_size">> = {
  tiny: {
    hidden_size: 64,
    intermediate_size: 176,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    max_position_embeddings: 512,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    tie_word_embeddings: true,
    attention_bias: false,
  },
  small: {
    hidden_size: 128,
    intermediate_size: 352,
    num_hidden_layers: 4,
    num_attention_heads: 4,
    num_key_value_heads: 4,
    max_position_embeddings: 1024,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    tie_word_embeddings: true,
    attention_bias: false,
  },
  base: {
    hidden_size: 256,
    intermediate_size: 688,
    num_hidden_layers: 6,
    num_attention_heads: 8,
    num_key_value_heads: 4,
    max_position_embeddings: 2048,
    rms_norm_eps: 1e-5,
    rope_theta: 10000,
    tie_word_embeddings: true,
    attention_bias: false,
  },
};

/** A full Llama config for a zoo size, over the byte tokenizer's vocabulary. */
export function configForSize(size: ModelSize): LlamaConfig {
  const base = MODEL_SIZES[size];
  if (!base)
    throw new TypeError(
      `size: expected one of ${Object.keys(MODEL_SIZES).join(", ")}, got ${JSON.stringify(size)}`,
    );
  return { architecture: "LlamaForCausalLM", vocab_size: VOCAB_SIZE, ...base };
}

/** Width of one attention head. */
export function headDim(config: LlamaConfig): number {
  return config.hidden_size / config.num_attention_heads;
}

/** Every weight the model has, by HF tensor name, with its shape ([out, in] for projections). */
export function parameterShapes(config: LlamaConfig): Map<string, number[]> {
  const d = config.hidden_size;
  const hd = headDim(config);
  const kv = config.num_key_value_heads * hd;
  const shapes = new Map<string, number[]>([["model.embed_tokens.weight", [config.vocab_size, d]]]);
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}.`;
    shapes.set(`${p}input_layernorm.weight`, [d]);
    shapes.set(`${p}self_attn.q_proj.weight`, [d, d]);
    shapes.set(`${p}self_attn.k_proj.weight`, [kv, d]);
    shapes.set(`${p}self_attn.v_proj.weight`, [kv, d]);
    if (config.attention_bias) {
      shapes.set(`${p}self_attn.q_proj.bias`, [d]);
      shapes.set(`${p}self_attn.k_proj.bias`, [kv]);
      shapes.set(`${p}self_attn.v_proj.bias`, [kv]);
    }
    shapes.set(`${p}self_attn.o_proj.weight`, [d, d]);
    shapes.set(`${p}post_attention_layernorm.weight`, [d]);
    shapes.set(`${p}mlp.gate_proj.weight`, [config.intermediate_size, d]);
    shapes.set(`${p}mlp.up_proj.weight`, [config.intermediate_size, d]);
    shapes.set(`${p}mlp.down_proj.weight`, [d, config.intermediate_size]);
  }
  shapes.set("model.norm.weight", [d]);
  if (!config.tie_word_embeddings) shapes.set("lm_head.weight", [config.vocab_size, d]);
  return shapes;
}

/** Total number of parameters. */
export function parameterCount(config: LlamaConfig): number {
  let n = 0;
  for (const shape of parameterShapes(config).values()) n += shape.reduce((a, b) => a * b, 1);
  return n;
}

/** Validates the fields that the math depends on; throws naming the field. */
export function validateConfig(config: LlamaConfig, source = "config"): void {
  const positive = [
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "max_position_embeddings",
  ] as const;
  for (const key of positive) {
    const v = config[key];
    if (!Number.isInteger(v) || v <= 0)
      throw new TypeError(`${source}.${key}: expected a positive integer, got ${JSON.stringify(v)}`);
  }
  if (config.hidden_size % config.num_attention_heads !== 0) {
    throw new TypeError(
      `${source}.hidden_size: expected a multiple of num_attention_heads (${config.num_attention_heads}), got ${config.hidden_size}`,
    );
  }
  if (config.num_attention_heads % config.num_key_value_heads !== 0) {
    throw new TypeError(
      `${source}.num_key_value_heads: expected a divisor of num_attention_heads (${config.num_attention_heads}), got ${config.num_key_value_heads}`,
    );
  }
  if (headDim(config) % 2 !== 0)
    throw new TypeError(`${source}: expected an even head dimension for RoPE, got ${headDim(config)}`);
}
