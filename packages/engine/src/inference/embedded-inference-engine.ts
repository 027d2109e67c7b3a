import type {
  FinishReason,
  GenerateOptions,
  GenRequest,
  GenResult,
  InferenceEngine,
  WeightSource,
} from "@arc/core";
import { initBackend, tf } from "../backend/tf-backend.ts";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import {
  attentionMask,
  forward,
  type KvCache,
  mulberry32,
  type RopeTables,
  ropeTables,
  type Weights,
} from "../model/llama.ts";
import type { LlamaConfig } from "../model/llama-config.ts";
import { decodeTokens, STOP_IDS, specialId } from "../tokenizer/byte-tokenizer.ts";
import { renderChat } from "../tokenizer/chat-template.ts";
import { disposeWeights, toWeights, weightsFromSource } from "./model-weights.ts";
import { type SampledToken, sampleToken } from "./sampler.ts";

/** Options of the embedded inference engine. */
export interface InferenceEngineOptions {
  /** Most samples decoded together in one batch; more wait for the next batch (default 16). */
  maxBatchSize?: number;
  /** Version of the initial weights (default 0). */
  version?: number;
}

/** One sample being decoded. */
interface Row {
  request: GenRequest;
  requestIndex: number;
  sampleIndex: number;
  prompt: number[];
  maxTokens: number;
  rand: () => number;
  tokens: number[];
  logprobs: number[];
  versions: number[];
  top: SampledToken["top"][];
  finish?: FinishReason;
  text: string;
  /** Length of `text` already handed to `onToken`. */
  emitted: number;
}

const PAD = specialId("<|pad|>");

/**
 * The embedded InferenceEngine: the Llama model on tensorflow.js, left-padded batches, a KV cache,
 * per-row seeded sampling. Calls to `generate` run one batch at a time; others wait their turn (a queue).
 */
export class EmbeddedInferenceEngine implements InferenceEngine {
  readonly config: LlamaConfig;
  private weights: Weights;
  private readonly rope: RopeTables;
  private version: number;
  private readonly maxBatchSize: number;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(config: LlamaConfig, weights: Weights, options: InferenceEngineOptions) {
    this.config = config;
    this.weights = weights;
    this.rope = ropeTables(config);
    this.version = options.version ?? 0;
    this.maxBatchSize = options.maxBatchSize ?? 16;
  }

  /** An engine over in-memory weights (HF names, float32). */
  static async create(
    config: LlamaConfig,
    tensors: Map<string, NamedTensor>,
    options: InferenceEngineOptions = {},
  ): Promise<EmbeddedInferenceEngine> {
    await initBackend();
    return new EmbeddedInferenceEngine(config, toWeights(config, tensors), options);
  }

  /** An engine over a checkpoint directory in the HF layout. */
  static async load(dir: string, options: InferenceEngineOptions = {}): Promise<EmbeddedInferenceEngine> {
    await initBackend();
    const { config, tensors } = await readHfCheckpoint(dir);
    return new EmbeddedInferenceEngine(config, toWeights(config, tensors, dir), options);
  }

  getVersion(): number {
    return this.version;
  }

  /** Swaps weights between two decoding steps: tokens after the swap carry the new version. */
  async setWeights(version: number, source: WeightSource): Promise<void> {
    const next = await weightsFromSource(this.config, source);
    const old = this.weights;
    this.weights = next;
    this.version = version;
    disposeWeights(old);
  }

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    const rows = requests.flatMap((request, requestIndex) => this.rowsOf(request, requestIndex));
    const run = this.queue.then(async () => {
      for (let i = 0; i < rows.length; i += this.maxBatchSize) {
        await this.decode(rows.slice(i, i + this.maxBatchSize), options);
      }
    });
    this.queue = run.catch(() => undefined);
    await run;
    return rows.map((row) => ({
      requestId: row.request.id,
      sampleIndex: row.sampleIndex,
      text: row.text,
      promptTokens: row.prompt,
      outputTokens: row.tokens,
      outputLogprobs: row.logprobs,
      outputVersions: row.versions,
      finishReason: row.finish ?? "length",
      ...(row.request.topLogprobs ? { topLogprobs: row.top.map((t) => t ?? []) } : {}),
    }));
  }

  private rowsOf(request: GenRequest, requestIndex: number): Row[] {
    const field = `requests[${requestIndex}]`;
    let prompt: number[];
    if (request.promptTokens) prompt = request.promptTokens;
    else if (request.messages) prompt = renderChat(request.messages);
    else throw new TypeError(`${field}: expected promptTokens or messages, got neither`);
    if (prompt.length === 0)
      throw new TypeError(`${field}.promptTokens: expected at least one token, got none`);
    const bad = prompt.find((t) => !Number.isInteger(t) || t < 0 || t >= this.config.vocab_size);
    if (bad !== undefined)
      throw new TypeError(
        `${field}.promptTokens: expected ids in [0, ${this.config.vocab_size}), got ${bad}`,
      );
    const n = request.n ?? 1;
    if (!Number.isInteger(n) || n < 1)
      throw new TypeError(`${field}.n: expected a positive integer, got ${n}`);
    const room = this.config.max_position_embeddings - prompt.length;
    if (room < 1)
      throw new TypeError(
        `${field}: prompt of ${prompt.length} tokens leaves no room in the context of ${this.config.max_position_embeddings}`,
      );
    const maxTokens = Math.min(request.maxTokens ?? 64, room);
    const temperature = request.temperature ?? 1;
    if (!(temperature >= 0))
      throw new TypeError(`${field}.temperature: expected a number >= 0, got ${temperature}`);
    const topP = request.topP ?? 1;
    if (!(topP > 0 && topP <= 1))
      throw new TypeError(`${field}.topP: expected a number in (0, 1], got ${topP}`);
    const seed = request.seed ?? Math.floor(Math.random() * 2 ** 31);
    return Array.from({ length: n }, (_, sampleIndex) => ({
      request,
      requestIndex,
      sampleIndex,
      prompt,
      maxTokens,
      rand: mulberry32((seed * 1_000_003 + sampleIndex * 7919) >>> 0),
      tokens: [],
      logprobs: [],
      versions: [],
      top: [],
      text: "",
      emitted: 0,
    }));
  }

  /** Prefills one batch, then decodes token by token with the KV cache until every row is done. */
  private async decode(rows: Row[], { signal, onToken }: GenerateOptions): Promise<void> {
    const P = Math.max(...rows.map((r) => r.prompt.length));
    const maxNew = Math.max(...rows.map((r) => r.maxTokens));
    let active = rows.map((_, i) => i); // rows still decoding, in batch order
    let keyIsPad = rows.map((r) => {
      const pad = new Uint8Array(P + maxNew);
      pad.fill(1, 0, P - r.prompt.length);
      return pad;
    });
    const tokens = rows.flatMap((r) => [...new Array(P - r.prompt.length).fill(PAD), ...r.prompt]);
    const positions = rows.flatMap((r) =>
      Array.from({ length: P }, (_, t) => Math.max(0, t - (P - r.prompt.length))),
    );
    let nextPos = rows.map((r) => r.prompt.length);
    let cache: KvCache | undefined;
    let past = 0;
    let input = {
      tokens: tf.tensor2d(tokens, [rows.length, P], "int32"),
      positions: tf.tensor2d(positions, [rows.length, P], "int32"),
    };
    let T = P;
    try {
      while (active.length > 0) {
        if (signal?.aborted) {
          for (const i of active) {
            rows[i].finish = "abort";
            onToken?.({ ...lastEvent(rows[i]), textDelta: "", finishReason: "abort" });
          }
          break;
        }
        const mask = attentionMask(keyIsPad, past, T);
        const weights = this.weights;
        const version = this.version;
        const result: { logits: tf.Tensor3D; cache: KvCache } = tf.tidy(
          () =>
            forward(this.config, weights, this.rope, {
              ...input,
              mask,
              cache,
              embedding: "gather",
              lastOnly: true,
            }) as unknown as tf.TensorContainer,
        ) as unknown as { logits: tf.Tensor3D; cache: KvCache };
        mask.dispose();
        input.tokens.dispose();
        input.positions.dispose();
        if (cache) disposeCache(cache);
        cache = result.cache;
        past += T;
        T = 1;
        const logits = result.logits.dataSync() as Float32Array; // [B, 1, V]
        result.logits.dispose();
        const V = this.config.vocab_size;
        const next: number[] = [];
        const stillActive: number[] = [];
        active.forEach((rowIndex, b) => {
          const row = rows[rowIndex];
          const req = row.request;
          const picked = sampleToken(
            logits,
            b * V,
            V,
            { temperature: req.temperature ?? 1, topP: req.topP ?? 1, topK: req.topK ?? 0 },
            row.rand(),
            req.topLogprobs ?? 0,
          );
          row.tokens.push(picked.token);
          row.logprobs.push(picked.logprob);
          row.versions.push(version);
          row.top.push(picked.top);
          const done = finishRow(row, picked.token);
          if (onToken) {
            const safe = done ? row.text.length : stableLength(row.text, req.stop ?? []);
            const textDelta = row.text.slice(row.emitted, Math.max(row.emitted, safe));
            row.emitted = Math.max(row.emitted, safe);
            onToken({ ...lastEvent(row), textDelta, finishReason: row.finish, topLogprobs: picked.top });
          }
          if (done) return;
          stillActive.push(b);
          next.push(picked.token);
        });
        if (stillActive.length < active.length && stillActive.length > 0 && cache) {
          const keep = tf.tensor1d(stillActive, "int32");
          const compact = (ts: tf.Tensor4D[]) => ts.map((t) => tf.gather(t, keep, 0) as tf.Tensor4D);
          const slim = { keys: compact(cache.keys), values: compact(cache.values) };
          keep.dispose();
          disposeCache(cache);
          cache = slim;
          keyIsPad = stillActive.map((b) => keyIsPad[b]);
          nextPos = stillActive.map((b) => nextPos[b]);
        }
        active = stillActive.map((b) => active[b]);
        if (active.length === 0) break;
        input = {
          tokens: tf.tensor2d(next, [active.length, 1], "int32"),
          positions: tf.tensor2d(nextPos, [active.length, 1], "int32"),
        };
        nextPos = nextPos.map((p) => p + 1);
        // Let other requests, aborts and weight updates in between two steps.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      if (cache) disposeCache(cache);
    }
  }
}

function lastEvent(row: Row) {
  const i = row.tokens.length - 1;
  return {
    requestIndex: row.requestIndex,
    sampleIndex: row.sampleIndex,
    token: row.tokens[i] ?? -1,
    logprob: row.logprobs[i] ?? 0,
    version: row.versions[i] ?? -1,
  };
}

/** Length of the prefix of `text` that no later token can change: not the start of a stop string, not a cut character. */
function stableLength(text: string, stops: string[]): number {
  let end = text.length;
  while (end > 0 && text[end - 1] === "\uFFFD") end--;
  for (const s of stops) {
    for (let k = Math.min(s.length - 1, end); k > 0; k--) {
      if (text.endsWith(s.slice(0, k))) {
        end = Math.min(end, text.length - k);
        break;
      }
    }
  }
  return end;
}

function disposeCache(cache: KvCache): void {
  for (const t of cache.keys) t.dispose();
  for (const t of cache.values) t.dispose();
}

/** Records a sampled token's effect on the row's text; true when the row is finished. */
function finishRow(row: Row, token: number): boolean {
  if (STOP_IDS.has(token)) {
    row.text = decodeTokens(row.tokens);
    row.finish = "stop";
    return true;
  }
  const text = decodeTokens(row.tokens);
  const stops = row.request.stop ?? [];
  let cut = -1;
  for (const s of stops) {
    if (s.length === 0) continue;
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  row.text = text;
  if (cut >= 0) {
    row.text = text.slice(0, cut);
    row.finish = "stop";
    return true;
  }
  if (row.tokens.length >= row.maxTokens) {
    row.finish = "length";
    return true;
  }
  return false;
}
