/**
 * Checkpoints in the Hugging Face layout: `config.json`, `model.safetensors` (or shards with
 * `model.safetensors.index.json`), `tokenizer.json`, `tokenizer_config.json`, `generation_config.json`.
 * What this writes loads in HF transformers as LlamaForCausalLM; HF Llama/Qwen2 checkpoints load here.
 */

import { existsSync } from "node:fs";
import { copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type LlamaConfig, parameterShapes, validateConfig } from "../model/llama-config.ts";
import { parseRopeScaling, type RopeScaling } from "../model/rope-scaling.ts";
import { specialId } from "../tokenizer/byte-tokenizer.ts";
import { readTokenizerFiles, writeTokenizerFiles } from "../tokenizer/tokenizer-files.ts";
import { CheckpointError } from "./checkpoint-error.ts";
import { type NamedTensor, readSafetensors, type SafetensorsDtype, writeSafetensors } from "./safetensors.ts";

/** Options for writing a checkpoint. */
export interface WriteCheckpointOptions {
  /** Storage dtype of the weights (default F32, which round-trips bit-exactly). */
  dtype?: SafetensorsDtype;
  /** Split weights into shards of at most this many bytes, with an index file (default: one file). */
  maxShardBytes?: number;
  /** Extra `generation_config.json` fields (temperature, top_p...). */
  generation?: Record<string, unknown>;
  /**
   * The checkpoint this one's weights came from: its tokenizer and generation settings are kept (its tokenizer files
   * and `generation_config.json` copied). Default: Arc's byte tokenizer.
   */
  tokenizerFrom?: string;
}

/** The files of a checkpoint that make up its tokenizer and chat template. */
const TOKENIZER_FILES = [
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "vocab.json",
  "merges.txt",
  "chat_template.jinja",
];

/** `config.json` contents for a config, with the fields HF's LlamaConfig / Qwen2Config read. */
export function configJson(config: LlamaConfig, dtype: SafetensorsDtype = "F32"): Record<string, unknown> {
  const qwen = config.architecture === "Qwen2ForCausalLM";
  return {
    architectures: [config.architecture],
    model_type: qwen ? "qwen2" : "llama",
    vocab_size: config.vocab_size,
    hidden_size: config.hidden_size,
    intermediate_size: config.intermediate_size,
    num_hidden_layers: config.num_hidden_layers,
    num_attention_heads: config.num_attention_heads,
    num_key_value_heads: config.num_key_value_heads,
    head_dim: config.hidden_size / config.num_attention_heads,
    max_position_embeddings: config.max_position_embeddings,
    rms_norm_eps: config.rms_norm_eps,
    rope_theta: config.rope_theta,
    rope_scaling: config.rope_scaling ?? null,
    tie_word_embeddings: config.tie_word_embeddings,
    ...(qwen ? { use_sliding_window: false } : { attention_bias: config.attention_bias, mlp_bias: false }),
    attention_dropout: 0,
    hidden_act: "silu",
    initializer_range: 0.02,
    bos_token_id: specialId("<|bos|>"),
    eos_token_id: specialId("<|end|>"),
    pad_token_id: specialId("<|pad|>"),
    torch_dtype: { F32: "float32", F16: "float16", BF16: "bfloat16" }[dtype],
    use_cache: true,
  };
}

/**
 * RoPE base of a config: transformers >= 5 writes `rope_parameters: {rope_type, rope_theta, ...}`, earlier versions
 * a top-level `rope_theta`.
 */
function readRopeTheta(raw: Record<string, unknown>, file: string): number {
  const params = raw.rope_parameters as { rope_type?: unknown; rope_theta?: unknown } | null | undefined;
  if (params == null) return (raw.rope_theta as number | undefined) ?? 10000;
  if (typeof params.rope_theta !== "number")
    throw new CheckpointError(
      `${file}: rope_parameters.rope_theta: expected a number, got ${JSON.stringify(params.rope_theta)}`,
      { file },
    );
  return params.rope_theta;
}

/** Parses `config.json`; throws naming the file for an unsupported architecture or a bad field. */
export function parseConfigJson(raw: Record<string, unknown>, file = "config.json"): LlamaConfig {
  const archs = raw.architectures;
  const arch = Array.isArray(archs) ? archs[0] : undefined;
  if (arch !== "LlamaForCausalLM" && arch !== "Qwen2ForCausalLM") {
    throw new CheckpointError(
      `${file}: unsupported architecture ${JSON.stringify(archs ?? raw.model_type)}; expected LlamaForCausalLM or Qwen2ForCausalLM`,
      { file },
    );
  }
  if (raw.hidden_act !== undefined && raw.hidden_act !== "silu") {
    throw new CheckpointError(`${file}: hidden_act: expected "silu", got ${JSON.stringify(raw.hidden_act)}`, {
      file,
    });
  }
  const ropeTheta = readRopeTheta(raw, file);
  let ropeScaling: RopeScaling | undefined;
  try {
    ropeScaling = parseRopeScaling(
      (raw.rope_parameters ?? raw.rope_scaling) as Record<string, unknown> | null,
      (raw.max_position_embeddings as number | undefined) ?? 2048,
      file,
    );
  } catch (error) {
    throw new CheckpointError((error as Error).message, { file });
  }
  if (raw.use_sliding_window === true)
    throw new CheckpointError(`${file}: use_sliding_window: expected false, got true (not supported)`, {
      file,
    });
  const heads = raw.num_attention_heads as number;
  const config: LlamaConfig = {
    architecture: arch,
    vocab_size: raw.vocab_size as number,
    hidden_size: raw.hidden_size as number,
    intermediate_size: raw.intermediate_size as number,
    num_hidden_layers: raw.num_hidden_layers as number,
    num_attention_heads: heads,
    num_key_value_heads: (raw.num_key_value_heads as number | undefined) ?? heads,
    max_position_embeddings: (raw.max_position_embeddings as number | undefined) ?? 2048,
    rms_norm_eps: (raw.rms_norm_eps as number | undefined) ?? 1e-6,
    rope_theta: ropeTheta,
    ...(ropeScaling ? { rope_scaling: ropeScaling } : {}),
    tie_word_embeddings: (raw.tie_word_embeddings as boolean | undefined) ?? arch === "Qwen2ForCausalLM",
    attention_bias:
      arch === "Qwen2ForCausalLM" ? true : ((raw.attention_bias as boolean | undefined) ?? false),
  };
  validateConfig(config, file);
  if (raw.head_dim !== undefined && raw.head_dim !== config.hidden_size / heads) {
    throw new CheckpointError(
      `${file}: head_dim: expected hidden_size / num_attention_heads = ${config.hidden_size / heads}, got ${raw.head_dim}`,
      { file },
    );
  }
  return config;
}

/** Writes a complete checkpoint directory. */
export async function writeHfCheckpoint(
  dir: string,
  config: LlamaConfig,
  tensors: Map<string, NamedTensor>,
  options: WriteCheckpointOptions = {},
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const dtype = options.dtype ?? "F32";
  const ordered = new Map<string, NamedTensor>();
  for (const name of parameterShapes(config).keys()) {
    const t = tensors.get(name);
    if (!t)
      throw new CheckpointError(`cannot write checkpoint: tensor ${name} is missing`, {
        file: dir,
        tensor: name,
        statusCode: 500,
      });
    ordered.set(name, t);
  }
  await writeFile(join(dir, "config.json"), JSON.stringify(configJson(config, dtype), null, 2));
  const bytesPer = dtype === "F32" ? 4 : 2;
  const shards: Map<string, NamedTensor>[] = [new Map()];
  let shardBytes = 0;
  for (const [name, t] of ordered) {
    const size = t.data.length * bytesPer;
    if (options.maxShardBytes && shardBytes > 0 && shardBytes + size > options.maxShardBytes) {
      shards.push(new Map());
      shardBytes = 0;
    }
    shards[shards.length - 1].set(name, t);
    shardBytes += size;
  }
  if (shards.length === 1) {
    await writeSafetensors(join(dir, "model.safetensors"), ordered, { dtype });
  } else {
    const weightMap: Record<string, string> = {};
    let total = 0;
    for (const [i, shard] of shards.entries()) {
      const file = `model-${String(i + 1).padStart(5, "0")}-of-${String(shards.length).padStart(5, "0")}.safetensors`;
      await writeSafetensors(join(dir, file), shard, { dtype });
      for (const [name, t] of shard) {
        weightMap[name] = file;
        total += t.data.length * bytesPer;
      }
    }
    await writeFile(
      join(dir, "model.safetensors.index.json"),
      JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2),
    );
  }
  if (options.tokenizerFrom) {
    // saved over the checkpoint it came from: its tokenizer files are already there
    if (resolve(options.tokenizerFrom) !== resolve(dir))
      await copyTokenizer(options.tokenizerFrom, dir, options.generation);
    return;
  }
  await writeTokenizerFiles(dir);
  await writeFile(
    join(dir, "generation_config.json"),
    JSON.stringify(
      {
        bos_token_id: specialId("<|bos|>"),
        eos_token_id: [specialId("<|end|>"), specialId("<|eos|>")],
        pad_token_id: specialId("<|pad|>"),
        do_sample: true,
        temperature: 1.0,
        top_p: 1.0,
        ...options.generation,
      },
      null,
      2,
    ),
  );
}

/**
 * Copies the tokenizer files of checkpoint `from` into `dir`, and its generation settings (`generation_config.json`,
 * else the bos/eos/pad ids of its `config.json`) with `generation` over them.
 */
async function copyTokenizer(
  from: string,
  dir: string,
  generation: Record<string, unknown> = {},
): Promise<void> {
  for (const file of TOKENIZER_FILES) {
    if (existsSync(join(from, file))) await copyFile(join(from, file), join(dir, file));
  }
  const settings = existsSync(join(from, "generation_config.json"))
    ? await readJson(join(from, "generation_config.json"))
    : pickIds(await readJson(join(from, "config.json")));
  await writeFile(
    join(dir, "generation_config.json"),
    JSON.stringify({ ...settings, ...generation }, null, 2),
  );
}

/** The special token ids of a `config.json`. */
function pickIds(config: Record<string, unknown>): Record<string, unknown> {
  const ids: Record<string, unknown> = {};
  for (const key of ["bos_token_id", "eos_token_id", "pad_token_id"])
    if (key in config) ids[key] = config[key];
  return ids;
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch {
    throw new CheckpointError(`${path}: file not found`, { file: path });
  }
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new CheckpointError(`${path}: not valid JSON (${(error as Error).message})`, {
      file: path,
      cause: error,
    });
  }
}

/** A checkpoint as read: architecture, float32 weights by HF name, and what its tokenizer is. */
export interface HfCheckpoint {
  config: LlamaConfig;
  tensors: Map<string, NamedTensor>;
  /** Why the tokenizer is not the byte tokenizer, when it is not (the model then runs on token ids only). */
  foreignTokenizer?: string;
  /** Token ids that end generation: `eos_token_id` of generation_config.json or config.json. */
  eosTokenIds: number[];
}

async function eosTokenIds(dir: string, raw: Record<string, unknown>): Promise<number[]> {
  let ids: unknown = raw.eos_token_id;
  if (existsSync(join(dir, "generation_config.json"))) {
    const gen = await readJson(join(dir, "generation_config.json"));
    ids = gen.eos_token_id ?? ids;
  }
  const list = Array.isArray(ids) ? ids : ids === undefined || ids === null ? [] : [ids];
  return list.filter((x): x is number => Number.isInteger(x));
}

/** Reads a checkpoint directory; every expected tensor must be present with its expected shape. */
export async function readHfCheckpoint(dir: string): Promise<HfCheckpoint> {
  const rawConfig = await readJson(join(dir, "config.json"));
  const config = parseConfigJson(rawConfig, join(dir, "config.json"));
  const { foreign } = await readTokenizerFiles(dir);
  const all = new Map<string, NamedTensor>();
  const whereFrom = new Map<string, string>();
  const indexPath = join(dir, "model.safetensors.index.json");
  const index = existsSync(indexPath) ? await readJson(indexPath) : undefined;
  const files = index
    ? [...new Set(Object.values((index.weight_map ?? {}) as Record<string, string>))]
    : ["model.safetensors"];
  for (const file of files) {
    const path = join(dir, file);
    let tensors: Map<string, NamedTensor>;
    try {
      tensors = await readSafetensors(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        throw new CheckpointError(`${path}: file not found`, { file: path, cause: error });
      throw error;
    }
    for (const [name, t] of tensors) {
      all.set(name, t);
      whereFrom.set(name, path);
    }
  }
  const tensors = new Map<string, NamedTensor>();
  for (const [name, shape] of parameterShapes(config)) {
    const t = all.get(name);
    if (!t)
      throw new CheckpointError(`${dir}: missing tensor ${name} (expected shape [${shape.join(", ")}])`, {
        file: dir,
        tensor: name,
      });
    if (t.shape.length !== shape.length || t.shape.some((s, i) => s !== shape[i])) {
      throw new CheckpointError(
        `${whereFrom.get(name)}: tensor ${name} has shape [${t.shape.join(", ")}], expected [${shape.join(", ")}]`,
        { file: whereFrom.get(name), tensor: name },
      );
    }
    tensors.set(name, t);
  }
  return {
    config,
    tensors,
    eosTokenIds: await eosTokenIds(dir, rawConfig),
    ...(foreign ? { foreignTokenizer: foreign } : {}),
  };
}
