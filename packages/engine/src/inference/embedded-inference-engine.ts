import type {
  FinishReason,
  GenerateOptions,
  GenRequest,
  GenResult,
  InferenceEngine,
  ToolCallSyntax,
  WeightSource,
} from "@arc/core";
import { initBackend, tf } from "../backend/tf-backend.ts";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import type { NamedTensor } from "../checkpoint/safetensors.ts";
import { GrammarConstraint } from "../grammar/grammar-constraint.ts";
import { compileGrammar } from "../grammar/grammar-program.ts";
import { TokenVocabulary } from "../grammar/token-vocabulary.ts";
import { KvCache } from "../model/kv-cache.ts";
import {
  attentionMask,
  forward,
  fuseForInference,
  mulberry32,
  type RopeTables,
  ropeTables,
  type Weights,
} from "../model/llama.ts";
import type { LlamaConfig } from "../model/llama-config.ts";
import { STOP_IDS, specialId } from "../tokenizer/byte-tokenizer.ts";
import { byteChatTokenizer, type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { ContextLengthError } from "./context-length-error.ts";
import { LogitAdjustment } from "./logit-adjustment.ts";
import { disposeWeights, toWeights, weightsFromSource } from "./model-weights.ts";
import { PrefixCache, type PrefixCacheStats, type PrefixHit } from "./prefix-cache.ts";
import { type SampledToken, sampleToken } from "./sampler.ts";
import { stableLength } from "./stable-text.ts";

/** Most positions a new cache holds past its prompts before it first grows (most answers fit). */
const DECODE_ROOM = 512;
/** Positions of left padding every running row has before they are dropped (dropping copies the whole cache). */
const TRIM_AT_LEAST = 32;

/** Options of the embedded inference engine. */
export interface InferenceEngineOptions {
  /** Most samples decoded together; more wait in a queue and join as running ones finish (default 16). */
  maxBatchSize?: number;
  /** Version of the initial weights (default 0). */
  version?: number;
  /**
   * Bytes of prompt prefixes' keys and values kept for later prompts that begin alike (default 128 MiB; 0 turns
   * prefix caching off). See PrefixCache.
   */
  prefixCacheBytes?: number;
}

/** The prefix cache's default bound. */
const PREFIX_CACHE_BYTES = 128 * 1024 * 1024;

/** What the engine knows about a checkpoint's tokenizer. */
interface TokenizerInfo {
  /** Renders chat messages and decodes text; absent when the checkpoint's tokenizer cannot be read. */
  chat?: ChatTokenizer;
  /** Why text in and out is unavailable, when `chat` is absent. */
  unavailable?: string;
  stopIds: ReadonlySet<number>;
}

/** One `generate` call: its options and how many of its samples are still unfinished. */
interface Call {
  options: GenerateOptions;
  remaining: number;
  resolve: () => void;
  reject: (error: unknown) => void;
  /** Why the call failed, once one of its samples did: its other samples leave the batch unheard. */
  failed?: unknown;
}

/** One sample: its request, sampling state and what it has produced so far. */
interface Row {
  call: Call;
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
  /** The request's grammar, followed token by token. */
  constraint?: GrammarConstraint;
  /** The request's logit bias and penalties, with the tokens this sample has drawn. */
  adjustment?: LogitAdjustment;
}

/** A row in the running batch: 1 per cached position that is left padding, and where it goes next. */
interface Slot {
  row: Row;
  pad: number[];
  nextPosition: number;
}

const PAD = specialId("<|pad|>");

/**
 * The embedded InferenceEngine: the Llama model on tensorflow.js with a KV cache and continuous batching.
 * Samples from every concurrent `generate` call share one running batch of up to `maxBatchSize` rows;
 * queued samples are prefilled and join it between two decoding steps, and finished ones leave it.
 * Each sample draws from its own seeded PRNG, so its tokens do not depend on the others it shares a batch with
 * (up to float rounding of the batched math).
 */
export class EmbeddedInferenceEngine implements InferenceEngine {
  readonly config: LlamaConfig;
  private weights: Weights;
  private readonly rope: RopeTables;
  private version: number;
  private readonly maxBatchSize: number;
  private readonly pending: Row[] = [];
  private running = false;
  private readonly tokenizer: TokenizerInfo;
  /** `longestTokenBytes`, once read off the vocabulary. */
  private longestToken: number | undefined;
  /** Keys and values of earlier prompts' prefixes, by block; absent when turned off. */
  private readonly prefixes: PrefixCache | undefined;
  /** The vocabulary as grammars walk it, built for the first request with a grammar. */
  private vocabulary: TokenVocabulary | undefined;

  private constructor(
    config: LlamaConfig,
    weights: Weights,
    options: InferenceEngineOptions,
    tokenizer: TokenizerInfo = { chat: byteChatTokenizer, stopIds: STOP_IDS },
  ) {
    this.config = config;
    this.tokenizer = tokenizer;
    this.weights = weights;
    this.rope = ropeTables(config);
    this.version = options.version ?? 0;
    this.maxBatchSize = options.maxBatchSize ?? 16;
    const prefixBytes = options.prefixCacheBytes ?? PREFIX_CACHE_BYTES;
    this.prefixes =
      prefixBytes > 0
        ? new PrefixCache(
            {
              layers: config.num_hidden_layers,
              kvHeads: config.num_key_value_heads,
              headDim: config.hidden_size / config.num_attention_heads,
            },
            prefixBytes,
          )
        : undefined;
  }

  /** An engine over in-memory weights (HF names and layout, float32). */
  static async create(
    config: LlamaConfig,
    tensors: Map<string, NamedTensor>,
    options: InferenceEngineOptions = {},
  ): Promise<EmbeddedInferenceEngine> {
    await initBackend();
    return new EmbeddedInferenceEngine(config, fuseForInference(config, toWeights(config, tensors)), options);
  }

  /** What the prefix cache holds and has saved; undefined when it is off. */
  get prefixCacheStats(): PrefixCacheStats | undefined {
    return this.prefixes?.stats;
  }

  /** An engine over a checkpoint directory in the HF layout. */
  static async load(dir: string, options: InferenceEngineOptions = {}): Promise<EmbeddedInferenceEngine> {
    await initBackend();
    const { config, tensors, eosTokenIds } = await readHfCheckpoint(dir);
    let tokenizer: TokenizerInfo;
    try {
      const chat = await loadChatTokenizer(dir);
      tokenizer = {
        chat,
        stopIds: chat.kind === "byte" ? STOP_IDS : new Set([...chat.stopIds, ...eosTokenIds]),
      };
    } catch (error) {
      tokenizer = { unavailable: (error as Error).message, stopIds: new Set(eosTokenIds) };
    }
    return new EmbeddedInferenceEngine(
      config,
      fuseForInference(config, toWeights(config, tensors, dir)),
      options,
      tokenizer,
    );
  }

  getVersion(): number {
    return this.version;
  }

  /**
   * The most bytes of text one token of the checkpoint's tokenizer stands for (1 for Arc's byte-level one), so that a
   * prompt's bytes bound its tokens from below before it is tokenized; undefined when the tokenizer cannot be read.
   */
  get longestTokenBytes(): number | undefined {
    const chat = this.tokenizer.chat;
    if (!chat) return undefined;
    if (chat.kind === "byte") return 1;
    if (this.longestToken === undefined) {
      let longest = 1;
      for (let id = 0; id < this.config.vocab_size; id++)
        longest = Math.max(longest, chat.tokenBytes(id)?.byteLength ?? 0);
      this.longestToken = longest;
    }
    return this.longestToken;
  }

  /** The vocabulary as grammars walk it, built once. */
  private grammarVocabulary(chat: ChatTokenizer): TokenVocabulary {
    this.vocabulary ??= new TokenVocabulary(this.config.vocab_size, (id) => chat.tokenBytes(id));
    return this.vocabulary;
  }

  get toolCallSyntax(): ToolCallSyntax | undefined {
    return this.tokenizer.chat?.toolCallSyntax;
  }

  /** Frees the weights' tensors; for an engine no generation runs on any more. */
  async close(): Promise<void> {
    disposeWeights(this.weights);
  }

  /** Swaps weights between two decoding steps: tokens sampled after the swap carry the new version. */
  async setWeights(version: number, source: WeightSource): Promise<void> {
    const next = fuseForInference(this.config, await weightsFromSource(this.config, source));
    const old = this.weights;
    this.weights = next;
    this.version = version;
    this.prefixes?.clear();
    disposeWeights(old);
  }

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const call: Call = { options, remaining: 0, resolve, reject };
    const rows = requests.flatMap((request, requestIndex) => this.rowsOf(call, request, requestIndex));
    call.remaining = rows.length;
    if (rows.length === 0) return [];
    this.pending.push(...rows);
    void this.loop();
    await done;
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

  private rowsOf(call: Call, request: GenRequest, requestIndex: number): Row[] {
    const field = `requests[${requestIndex}]`;
    const chat = this.tokenizer.chat;
    if (!chat && (request.messages || request.stop?.length || request.grammar)) {
      throw new TypeError(
        `${field}: ${this.tokenizer.unavailable}; this model runs on token ids: give promptTokens, no stop strings and no grammar`,
      );
    }
    let prompt: number[];
    if (request.promptTokens) prompt = request.promptTokens;
    else if (request.messages) prompt = chat!.render(request.messages, { tools: request.tools });
    else throw new TypeError(`${field}: expected promptTokens or messages, got neither`);
    if (prompt.length === 0)
      throw new TypeError(`${field}.promptTokens: expected at least one token, got none`);
    const bad = prompt.find((t) => !Number.isInteger(t) || t < 0 || t >= this.config.vocab_size);
    if (bad !== undefined) {
      throw new TypeError(
        `${field}.promptTokens: expected ids in [0, ${this.config.vocab_size}), got ${bad}`,
      );
    }
    const n = request.n ?? 1;
    if (!Number.isInteger(n) || n < 1)
      throw new TypeError(`${field}.n: expected a positive integer, got ${n}`);
    const room = this.config.max_position_embeddings - prompt.length;
    if (room < 1) {
      throw new ContextLengthError(field, prompt.length, this.config.max_position_embeddings);
    }
    const maxTokens = request.maxTokens ?? 96;
    if (!Number.isInteger(maxTokens) || maxTokens < 1) {
      throw new TypeError(`${field}.maxTokens: expected a positive integer, got ${maxTokens}`);
    }
    const temperature = request.temperature ?? 1;
    if (!(temperature >= 0))
      throw new TypeError(`${field}.temperature: expected a number >= 0, got ${temperature}`);
    const topP = request.topP ?? 1;
    if (!(topP > 0 && topP <= 1))
      throw new TypeError(`${field}.topP: expected a number in (0, 1], got ${topP}`);
    const topK = request.topK ?? 0;
    if (!Number.isInteger(topK) || topK < 0)
      throw new TypeError(`${field}.topK: expected an integer >= 0, got ${topK}`);
    const adjustment = LogitAdjustment.of(request, this.config.vocab_size, field);
    const seed = request.seed ?? Math.floor(Math.random() * 2 ** 31);
    const program = request.grammar ? compileGrammar(request.grammar) : undefined;
    return Array.from({ length: n }, (_, sampleIndex) => ({
      call,
      request,
      requestIndex,
      sampleIndex,
      prompt,
      maxTokens: Math.min(maxTokens, room),
      rand: mulberry32((seed * 1_000_003 + sampleIndex * 7919) >>> 0),
      tokens: [],
      logprobs: [],
      versions: [],
      top: [],
      text: "",
      emitted: 0,
      constraint: program
        ? new GrammarConstraint(program, this.grammarVocabulary(chat!), this.tokenizer.stopIds)
        : undefined,
      adjustment: adjustment?.fork(),
    }));
  }

  /**
   * The decoding loop, one at a time per engine: admit queued rows (prefill, merge into the cache),
   * otherwise take one decoding step for the running batch; drop finished rows; yield to the event loop.
   */
  private async loop(): Promise<void> {
    if (this.running) return;
    this.running = true;
    let slots: Slot[] = [];
    let cache: KvCache | undefined;
    let admitted: Row[] = [];
    try {
      while (slots.length > 0 || this.pending.length > 0) {
        for (const row of this.pending) if (isAborted(row)) finish(row, "abort", !row.call.failed);
        this.pending.splice(0, this.pending.length, ...this.pending.filter((r) => !r.finish));
        for (const slot of slots) if (isAborted(slot.row)) finish(slot.row, "abort", !slot.row.call.failed);

        const room = this.maxBatchSize - slots.filter((s) => !s.row.finish).length;
        if (this.pending.length > 0 && room > 0) {
          admitted = this.pending.splice(0, room);
          const fresh = this.prefill(admitted);
          const joined = admitRows(slots, cache, fresh.slots, fresh.cache);
          slots = joined.slots;
          cache = joined.cache;
          admitted = [];
        } else if (slots.some((s) => !s.row.finish) && cache) {
          this.step(slots, cache);
        }
        // finished rows wait for queued ones to take their place; with none queued they leave the batch
        const keep = slots.map((s, i) => (s.row.finish ? -1 : i)).filter((i) => i >= 0);
        if (this.pending.length === 0 && keep.length < slots.length && cache) {
          cache = keep.length > 0 ? cache.selectRows(keep) : undefined;
          slots = keep.map((i) => slots[i]);
          if (cache) trimLeftPadding(slots, cache, 1);
        } else if (cache) {
          trimLeftPadding(slots, cache, TRIM_AT_LEAST);
        }
        await new Promise((resolve) => setImmediate(resolve)); // lets requests, aborts and weight swaps in
      }
    } catch (error) {
      // a failure of the math fails every call that had a sample in flight, being admitted or queued
      const rows = [...slots.map((s) => s.row), ...admitted, ...this.pending.splice(0)];
      for (const call of new Set(rows.map((row) => row.call))) call.reject(error);
    } finally {
      this.running = false;
    }
  }

  /**
   * Runs the prompts of newly admitted rows and samples their first token. A prompt that begins with a prefix the
   * prefix cache holds runs only the rest of it, after the cached keys and values; the others run together.
   */
  private prefill(rows: Row[]): { slots: Slot[]; cache: KvCache } {
    const lookup = (row: Row) => this.prefixes?.lookup(row.prompt, this.version, row.request.cacheSalt);
    const hits = rows.map(lookup);
    if (this.prefillSharedPrefixes(rows.filter((_, i) => !hits[i]?.length))) {
      rows.forEach((row, i) => {
        if (!hits[i]?.length) hits[i] = lookup(row);
      });
    }
    const parts: { slots: Slot[]; cache: KvCache }[] = [];
    const cold = rows.filter((_, i) => !hits[i]?.length);
    if (cold.length > 0) parts.push(this.prefillTogether(cold));
    const warm = new Map<string, { rows: Row[]; hit: PrefixHit }>();
    rows.forEach((row, i) => {
      const hit = hits[i];
      if (!hit?.length) return;
      const key = `${row.request.cacheSalt ?? ""}\u0000${row.prompt.join(",")}`;
      const group = warm.get(key);
      if (group) group.rows.push(row);
      else warm.set(key, { rows: [row], hit });
    });
    for (const { rows: same, hit } of warm.values()) parts.push(this.prefillAfterPrefix(same, hit));
    return parts.reduce((a, b) => joinPrefilled(a, b));
  }

  /**
   * Computes once, into the prefix cache, the longest whole-block prefix that the different prompts among `rows` of
   * one cache salt all begin with (the system prompt and tools of a rollout batch, or of calls that arrive together),
   * so that each prompt then runs only its own rest; true when it cached one.
   */
  private prefillSharedPrefixes(rows: Row[]): boolean {
    if (!this.prefixes) return false;
    const bySalt = new Map<string, Map<string, number[]>>();
    for (const row of rows) {
      const salt = row.request.cacheSalt ?? "";
      const distinct = bySalt.get(salt) ?? new Map<string, number[]>();
      distinct.set(row.prompt.join(","), row.prompt);
      bySalt.set(salt, distinct);
    }
    let cached = false;
    for (const [salt, distinct] of bySalt) {
      const prompts = [...distinct.values()];
      const length = sharedBlockPrefix(prompts, this.prefixes.blockSize);
      if (prompts.length < 2 || length === 0) continue;
      const prefix = prompts[0].slice(0, length);
      const cache = KvCache.forModel(this.config, 1, length);
      this.forward(
        [new Array(length).fill(0)],
        prefix,
        prefix.map((_, t) => t),
        length,
        cache,
      );
      this.prefixes.store(prefix, this.version, salt, cache, 0, 0);
      cached = true;
    }
    return cached;
  }

  /**
   * Runs whole prompts (left-padded to a common length) and samples their first token. Rows with the same prompt (the
   * n samples of a request, above all) share one forward pass: the prompt is run once and its cache rows are copied to
   * each of them, as vLLM's prefix caching does for n > 1.
   */
  private prefillTogether(rows: Row[]): { slots: Slot[]; cache: KvCache } {
    const P = Math.max(...rows.map((r) => r.prompt.length));
    const slots = rows.map((row) => {
      const padCount = P - row.prompt.length;
      return {
        row,
        pad: Array.from({ length: P }, (_, t) => (t < padCount ? 1 : 0)),
        nextPosition: row.prompt.length,
      };
    });
    const { distinct, first, source } = distinctPrompts(rows);
    const tokens = distinct.flatMap((p) => [...new Array(P - p.length).fill(PAD), ...p]);
    const positions = distinct.flatMap((p) =>
      Array.from({ length: P }, (_, t) => Math.max(0, t - (P - p.length))),
    );
    const pads = first.map((row) => slots[row].pad);
    const room = P + Math.min(DECODE_ROOM, Math.max(...rows.map((r) => r.maxTokens)));
    const cache = KvCache.forModel(this.config, distinct.length, room);
    const logits = this.forward(pads, tokens, positions, P, cache);
    rows.forEach((row, r) => {
      const prompt = distinct[source[r]];
      this.prefixes?.store(
        prompt,
        this.version,
        row.request.cacheSalt ?? "",
        cache,
        source[r],
        P - prompt.length,
      );
    });
    this.sampleAll(slots, logits, source);
    return { slots, cache: distinct.length === rows.length ? cache : cache.selectRows(source) };
  }

  /**
   * Runs the rest of one prompt (shared by `rows`) after its cached prefix `hit`, whose keys and values are copied in
   * first, and samples each row's first token.
   */
  private prefillAfterPrefix(rows: Row[], hit: PrefixHit): { slots: Slot[]; cache: KvCache } {
    const prompt = rows[0].prompt;
    const P = prompt.length;
    const room = P + Math.min(DECODE_ROOM, Math.max(...rows.map((r) => r.maxTokens)));
    const cache = KvCache.forModel(this.config, 1, room);
    this.prefixes!.fill(cache, 0, hit);
    cache.length = hit.length;
    const positions = Array.from({ length: P - hit.length }, (_, t) => hit.length + t);
    const logits = this.forward(
      [new Array(P).fill(0)],
      prompt.slice(hit.length),
      positions,
      P - hit.length,
      cache,
    );
    this.prefixes!.store(prompt, this.version, rows[0].request.cacheSalt ?? "", cache, 0, 0);
    const slots = rows.map((row) => ({ row, pad: new Array(P).fill(0), nextPosition: P }));
    this.sampleAll(
      slots,
      logits,
      rows.map(() => 0),
    );
    return { slots, cache: rows.length === 1 ? cache : cache.selectRows(rows.map(() => 0)) };
  }

  /** One decoding step: feeds each running row its last token, samples the next one. */
  private step(slots: Slot[], cache: KvCache): void {
    const tokens = slots.map((s) => s.row.tokens.at(-1) ?? PAD);
    const positions = slots.map((s) => s.nextPosition++);
    for (const s of slots) s.pad.push(s.row.finish ? 1 : 0);
    const logits = this.forward(
      slots.map((s) => s.pad),
      tokens,
      positions,
      1,
      cache,
    );
    this.sampleAll(
      slots,
      logits,
      slots.map((_, b) => b),
    );
  }

  /**
   * The model on [B, T] tokens after the cache's positions (pads: each row's padding flags, past and new): the
   * last position's logits [B, V]; the new positions' keys and values are added to the cache.
   */
  private forward(
    pads: number[][],
    tokens: number[],
    positions: number[],
    T: number,
    cache: KvCache,
  ): Float32Array {
    const B = pads.length;
    const logits = tf.tidy(
      () =>
        forward(this.config, this.weights, this.rope, {
          tokens: tf.tensor2d(tokens, [B, T], "int32"),
          positions: tf.tensor2d(positions, [B, T], "int32"),
          mask: attentionMask(pads, cache.length, T),
          cache,
          mode: "infer",
          lastOnly: true,
        }).logits,
    );
    const values = logits.dataSync() as Float32Array; // [B, 1, V]
    logits.dispose();
    return values;
  }

  /** Samples the next token of every unfinished slot from row `logitRow[i]` of `logits`, tagged with the engine's version. */
  private sampleAll(slots: Slot[], logits: Float32Array, logitRow: number[]): void {
    const V = this.config.vocab_size;
    slots.forEach((slot, i) => {
      if (slot.row.finish || slot.row.call.failed) return;
      try {
        this.sample(slot.row, logits, logitRow[i] * V, this.version);
      } catch (error) {
        // what one sample's grammar or listener throws fails that sample's call, no other
        fail(slot.row, error);
      }
    });
  }

  private sample(row: Row, logits: Float32Array, offset: number, version: number): void {
    const req = row.request;
    const V = this.config.vocab_size;
    const adjusted = row.adjustment?.apply(logits, offset, V);
    const source = adjusted ?? logits;
    const at = adjusted ? 0 : offset;
    const constrained = row.constraint?.mask(source, at, V);
    const picked = sampleToken(
      constrained ?? source,
      constrained ? 0 : at,
      V,
      { temperature: req.temperature ?? 1, topP: req.topP ?? 1, topK: req.topK ?? 0 },
      row.rand(),
      req.topLogprobs ?? 0,
    );
    row.constraint?.advance(picked.token);
    row.adjustment?.sampled(picked.token);
    row.tokens.push(picked.token);
    row.logprobs.push(picked.logprob);
    row.versions.push(version);
    row.top.push(picked.top);
    const reason = finishReasonAfter(row, picked.token, this.tokenizer);
    const onToken = row.call.options.onToken;
    if (onToken) {
      const safe = reason ? row.text.length : stableLength(row.text, req.stop ?? []);
      const textDelta = row.text.slice(row.emitted, Math.max(row.emitted, safe));
      row.emitted = Math.max(row.emitted, safe);
      onToken({ ...lastEvent(row), textDelta, finishReason: reason, topLogprobs: picked.top });
    }
    if (reason) finish(row, reason, false);
  }
}

/** Two sets of freshly prefilled rows as one: the shorter one's positions left-padded to end with the other's. */
function joinPrefilled(
  a: { slots: Slot[]; cache: KvCache },
  b: { slots: Slot[]; cache: KvCache },
): { slots: Slot[]; cache: KvCache } {
  const S = Math.max(a.cache.length, b.cache.length);
  for (const part of [a, b])
    for (const s of part.slots) s.pad.unshift(...new Array(S - part.cache.length).fill(1));
  return { slots: [...a.slots, ...b.slots], cache: KvCache.concatRows(a.cache, b.cache) };
}

/** The distinct prompts of `rows`, the first row of each, and for each row the index of its prompt among them. */
function distinctPrompts(rows: Row[]): { distinct: number[][]; first: number[]; source: number[] } {
  const distinct: number[][] = [];
  const first: number[] = [];
  const indexOf = new Map<string, number>();
  const source = rows.map((row, r) => {
    const key = row.prompt.join(",");
    let index = indexOf.get(key);
    if (index === undefined) {
      index = distinct.push(row.prompt) - 1;
      first.push(r);
      indexOf.set(key, index);
    }
    return index;
  });
  return { distinct, first, source };
}

function isAborted(row: Row): boolean {
  return (
    !row.finish &&
    (row.call.failed !== undefined ||
      row.call.options.signal?.aborted === true ||
      row.request.signal?.aborted === true)
  );
}

/** Fails the row's call with `error` (once) and takes the row out of the batch. */
function fail(row: Row, error: unknown): void {
  if (row.call.failed === undefined) {
    row.call.failed = error;
    row.call.reject(error);
  }
  if (!row.finish) finish(row, "abort", false);
}

/** Marks a row finished, tells its listener (unless it already heard) and resolves its call when it was the last. */
function finish(row: Row, reason: FinishReason, notify = true): void {
  row.finish = reason;
  if (notify) row.call.options.onToken?.({ ...lastEvent(row), textDelta: "", finishReason: reason });
  row.call.remaining--;
  if (row.call.remaining === 0) row.call.resolve();
}

/**
 * Rows that join the running batch: they take the places of finished rows in the cache when there are enough and
 * their prompts fit before its last position (a copy of the new rows only); otherwise the running rows are selected
 * and joined with them in a new cache.
 */
function admitRows(
  running: Slot[],
  cache: KvCache | undefined,
  joining: Slot[],
  joiningCache: KvCache,
): { slots: Slot[]; cache: KvCache } {
  if (!cache || running.length === 0) return { slots: joining, cache: joiningCache };
  const free = running.flatMap((s, i) => (s.row.finish ? [i] : []));
  if (joining.length <= free.length && joiningCache.length <= cache.length) {
    const into = free.slice(0, joining.length);
    cache.placeRows(joiningCache, into);
    const slots = [...running];
    joining.forEach((slot, i) => {
      slot.pad.unshift(...new Array(cache.length - joiningCache.length).fill(1));
      slots[into[i]] = slot;
    });
    return { slots, cache };
  }
  const keep = running.flatMap((s, i) => (s.row.finish ? [] : [i]));
  if (keep.length === 0) return { slots: joining, cache: joiningCache };
  const kept = keep.length < running.length ? cache.selectRows(keep) : cache;
  const slots = keep.map((i) => running[i]);
  const S = Math.max(kept.length, joiningCache.length);
  for (const [group, groupCache] of [
    [slots, kept],
    [joining, joiningCache],
  ] as const) {
    for (const s of group) s.pad.unshift(...new Array(S - groupCache.length).fill(1));
  }
  return { slots: [...slots, ...joining], cache: KvCache.concatRows(kept, joiningCache) };
}

/**
 * Drops cached positions that are left padding for every remaining row. Without it a batch that never
 * drains (rows keep joining as others finish, as under async rollouts) carries an ever longer cache.
 */
function trimLeftPadding(slots: Slot[], cache: KvCache, atLeast: number): void {
  const lead = Math.min(
    ...slots.map((s) => {
      let n = 0;
      while (n < s.pad.length && s.pad[n] === 1) n++;
      return n;
    }),
  );
  if (lead < atLeast) return;
  for (const s of slots) s.pad.splice(0, lead);
  cache.dropLeading(lead);
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

/** Updates the row's text after a token; returns why the row is finished, if it is. */
function finishReasonAfter(row: Row, token: number, tokenizer: TokenizerInfo): FinishReason | undefined {
  const text = tokenizer.chat ? tokenizer.chat.decode(row.tokens) : "";
  if (tokenizer.stopIds.has(token) && !row.request.ignoreEos) {
    row.text = text;
    return "stop";
  }
  let cut = -1;
  for (const s of row.request.stop ?? []) {
    if (s.length === 0) continue;
    const at = text.indexOf(s);
    if (at >= 0 && (cut < 0 || at < cut)) cut = at;
  }
  row.text = cut >= 0 ? text.slice(0, cut) : text;
  if (cut >= 0) return "stop";
  if (row.tokens.length >= row.maxTokens) return "length";
  return undefined;
}

/**
 * The longest prefix, in whole blocks of `blockSize`, that every prompt begins with and that leaves each at least one
 * token of its own to run (0 when there is none).
 */
export function sharedBlockPrefix(prompts: readonly (readonly number[])[], blockSize: number): number {
  if (prompts.length === 0) return 0;
  let common = Math.min(...prompts.map((p) => p.length - 1));
  for (const prompt of prompts.slice(1)) {
    let n = 0;
    while (n < common && prompt[n] === prompts[0][n]) n++;
    common = n;
  }
  return Math.max(0, Math.floor(common / blockSize) * blockSize);
}
