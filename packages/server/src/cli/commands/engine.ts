import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { type InferenceEngine, InvalidInputError } from "@arc/core";
import {
  AdapterPool,
  configForSize,
  EmbeddedInferenceEngine,
  initWeights,
  loadChatTokenizer,
  MODEL_SIZES,
  type ModelSize,
  type NamedTensor,
  parameterCount,
  readHfCheckpoint,
  type SafetensorsDtype,
  startEngineServer,
  TorchInferenceEngine,
  writeHfCheckpoint,
} from "@arc/engine";
import type { Command } from "../command.ts";
import { intFlag, type ParsedArgs, stringFlag } from "../parse-args.ts";

const HELP = `arc engine — create and serve models

Usage:
  arc engine init --size tiny|small|base --out <dir> [--seed 0] [--dtype f32|bf16|f16]
      Writes a freshly initialised Llama model in the Hugging Face layout (config.json,
      model.safetensors, tokenizer files with the chat template, generation_config.json).
  arc engine serve --model <dir> [--port 8000] [--host 127.0.0.1] [--model-id <id>] [--max-batch 16]
                   [--api-key <key>] [--max-body-bytes 10485760] [--request-timeout-ms 30000]
                   [--tool-call-parser arc-json|hermes] [--engine embedded|torch] [--device auto|cpu|cuda]
                   [--dtype f32|bf16|f16] [--allow-weight-updates] [--enable-lora] [--max-loras 8]
      Serves the checkpoint with an OpenAI-compatible API: POST /v1/chat/completions, GET /v1/models[/{id}].
      --engine torch samples with the PyTorch worker (any Hugging Face causal LM; --device and --dtype pick where
      and in what type its weights sit), batching the requests that arrive while it generates.
      For RL trainers it also speaks vLLM's POST /v1/completions (token-id prompts, logprobs,
      return_tokens_as_token_ids, return_token_ids), SGLang's POST /generate (input_ids, sampling_params,
      return_logprob), POST /tokenize and GET /health; with --allow-weight-updates, SGLang's
      POST /update_weights_from_disk loads a checkpoint path it is sent, and /pause_generation and
      /continue_generation hold new rollout requests while paused.
      With --enable-lora (embedded engine), vLLM's POST /v1/load_lora_adapter and /v1/unload_lora_adapter register
      PEFT LoRA adapters of the served model by name, and requests sample from one as model: <name>; at most
      --max-loras of them are held merged in memory at once, the least recently used dropped first.
      Tool calls are read from the model's text with --tool-call-parser: by default arc-json for Arc's byte models,
      hermes (<tool_call> tags) when the chat template writes those; tool_choice required or named, and
      response_format json_object / json_schema, are enforced by constrained decoding.
      With an API key (--api-key or ARC_ENGINE_API_KEY), requests need Authorization: Bearer <key>, else 401.
      Bodies over --max-body-bytes get 413; a request not received whole within --request-timeout-ms gets 408.

Environment: ARC_ENGINE_BACKEND=wasm|cpu (default wasm), ARC_ENGINE_API_KEY.`;

const DTYPES: Record<string, SafetensorsDtype> = { f32: "F32", bf16: "BF16", f16: "F16" };

function positiveIntFlag(args: ParsedArgs, name: string, fallback: number): number {
  const value = intFlag(args, name, fallback);
  if (value <= 0)
    throw new InvalidInputError(`--${name} expects a positive whole number, got ${value}`, { field: name });
  return value;
}

async function init(args: ParsedArgs): Promise<number> {
  const size = stringFlag(args, "size", "small") as ModelSize;
  if (!(size in MODEL_SIZES)) {
    throw new InvalidInputError(
      `--size: expected one of ${Object.keys(MODEL_SIZES).join(", ")}, got "${size}"`,
      { field: "size" },
    );
  }
  const out = stringFlag(args, "out");
  if (!out)
    throw new InvalidInputError("--out: expected the directory to write the model to", { field: "out" });
  const dtypeName = stringFlag(args, "dtype", "f32")!;
  const dtype = DTYPES[dtypeName];
  if (!dtype)
    throw new InvalidInputError(`--dtype: expected f32, bf16 or f16, got "${dtypeName}"`, { field: "dtype" });
  const config = configForSize(size);
  await writeHfCheckpoint(resolve(out), config, initWeights(config, intFlag(args, "seed", 0)), { dtype });
  console.log(
    `wrote a ${size} model (${parameterCount(config).toLocaleString("en-US")} parameters) to ${resolve(out)}`,
  );
  return 0;
}

async function serveModel(args: ParsedArgs): Promise<number> {
  const dir = stringFlag(args, "model");
  if (!dir)
    throw new InvalidInputError("--model: expected a checkpoint directory (see arc engine init)", {
      field: "model",
    });
  const apiKey = stringFlag(args, "api-key") ?? (process.env.ARC_ENGINE_API_KEY || undefined);
  const maxBodyBytes = positiveIntFlag(args, "max-body-bytes", 10 * 1024 * 1024);
  const requestTimeoutMs = positiveIntFlag(args, "request-timeout-ms", 30_000);
  let engine: InferenceEngine;
  try {
    engine = await loadServedEngine(args, dir);
  } catch (error) {
    if (error instanceof InvalidInputError) throw error;
    throw new InvalidInputError(`--model: cannot load ${dir}: ${(error as Error).message}`, {
      field: "model",
      cause: error,
    });
  }
  const modelId = stringFlag(args, "model-id", basename(resolve(dir)))!;
  const parser = stringFlag(args, "tool-call-parser");
  if (parser !== undefined && parser !== "arc-json" && parser !== "hermes")
    throw new InvalidInputError(`--tool-call-parser: expected arc-json or hermes, got "${parser}"`, {
      field: "tool-call-parser",
    });
  const config = JSON.parse(await readFile(join(resolve(dir), "config.json"), "utf8"));
  const adapters = args.flags["enable-lora"] === true ? adapterPool(args, dir) : undefined;
  if (adapters && args.flags["allow-weight-updates"] === true)
    throw new InvalidInputError(
      "--enable-lora: adapters sit on the checkpoint's own weights; leave out --allow-weight-updates with it",
      { field: "enable-lora" },
    );
  const server = await startEngineServer(engine, {
    modelId,
    tokenizer: await loadChatTokenizer(resolve(dir)),
    contextLength:
      typeof config.max_position_embeddings === "number" ? config.max_position_embeddings : undefined,
    allowWeightUpdates: args.flags["allow-weight-updates"] === true,
    adapters,
    port: intFlag(args, "port", 8000),
    host: stringFlag(args, "host", "127.0.0.1"),
    apiKey,
    maxBodyBytes,
    requestTimeoutMs,
    toolCallSyntax: parser,
  });
  console.log(
    `serving ${modelId} at ${server.baseURL} (POST /chat/completions, /completions, GET /models${apiKey ? "; API key required" : ""}); Ctrl-C stops`,
  );
  await new Promise<void>((done) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      done();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await server.close();
  await engine.close?.();
  return 0;
}

/** The checkpoint in `dir` on the engine `--engine` names. */
async function loadServedEngine(args: ParsedArgs, dir: string): Promise<InferenceEngine> {
  const kind = stringFlag(args, "engine", "embedded");
  if (kind === "embedded")
    return EmbeddedInferenceEngine.load(resolve(dir), { maxBatchSize: intFlag(args, "max-batch", 16) });
  if (kind !== "torch")
    throw new InvalidInputError(`--engine: expected embedded or torch, got "${kind}"`, { field: "engine" });
  const dtypeName = stringFlag(args, "dtype", "f32")!;
  const dtype = { f32: "float32", bf16: "bfloat16", f16: "float16" }[dtypeName] as
    | "float32"
    | "bfloat16"
    | "float16"
    | undefined;
  if (!dtype)
    throw new InvalidInputError(`--dtype: expected f32, bf16 or f16, got "${dtypeName}"`, { field: "dtype" });
  return TorchInferenceEngine.load(resolve(dir), { device: stringFlag(args, "device", "auto"), dtype });
}

/** The LoRA adapters `--enable-lora` serves: each merged into the embedded engine's copy of the checkpoint in `dir`. */
function adapterPool(args: ParsedArgs, dir: string): AdapterPool {
  if (stringFlag(args, "engine", "embedded") !== "embedded")
    throw new InvalidInputError("--enable-lora: adapters are served on the embedded engine only", {
      field: "enable-lora",
    });
  let base: Promise<Map<string, NamedTensor>> | undefined;
  return new AdapterPool(
    () => {
      base ??= readHfCheckpoint(resolve(dir)).then((c) => c.tensors);
      return base;
    },
    async (tensors) => {
      const engine = await EmbeddedInferenceEngine.load(resolve(dir), {
        maxBatchSize: intFlag(args, "max-batch", 16),
      });
      await engine.setWeights(0, { kind: "tensors", tensors });
      return engine;
    },
    positiveIntFlag(args, "max-loras", 8),
  );
}

/** `arc engine init|serve`: create a model of a zoo size, or serve a checkpoint over the OpenAI API. */
export const engineCommand: Command = {
  name: "engine",
  summary: "create (init) or serve (serve) a model",
  help: HELP,
  flags: {
    size: "string",
    out: "string",
    seed: "string",
    dtype: "string",
    model: "string",
    port: "string",
    host: "string",
    "model-id": "string",
    "max-batch": "string",
    "api-key": "string",
    "max-body-bytes": "string",
    "request-timeout-ms": "string",
    "tool-call-parser": "string",
    engine: "string",
    device: "string",
    "allow-weight-updates": "boolean",
    "enable-lora": "boolean",
    "max-loras": "string",
  },
  async run(args) {
    const [sub] = args.positionals;
    if (sub === "init") return init(args);
    if (sub === "serve") return serveModel(args);
    throw new InvalidInputError(
      `expected a subcommand init or serve, got ${sub ? `"${sub}"` : "none"}\n\n${HELP}`,
      {
        field: "subcommand",
      },
    );
  },
};
