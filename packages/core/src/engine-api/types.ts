/**
 * The Engine API: generation and training are separate roles (as in SGLang/vLLM vs FSDP).
 * `@arc/engine` implements these; `@arc/rl` codes against them with engines injected.
 *
 * Aligned token fields, named once:
 * - `promptTokens`: token ids of the prompt.
 * - `outputTokens`: token ids the model produced.
 * - `outputLogprobs`: log-probability of each output token under the policy that sampled it.
 * - `outputVersions`: the weight version that produced each output token.
 * - `lossMask`: 1 where a token counts in the loss, 0 where it does not (prompt, tool observations).
 */

/**
 * A tool call on an assistant message, as OpenAI's chat API carries it: `arguments` is JSON text (or, as HF chat
 * templates also take it, the parsed object).
 */
export interface ChatToolCall {
  id?: string;
  type?: "function";
  function: { name: string; arguments: string | Record<string, unknown> };
}

/** A chat message as a chat template reads it: `content` may be null on an assistant turn that only calls tools. */
export interface GenMessage {
  role: string;
  content: string | null;
  /** The calls an assistant turn made. */
  tool_calls?: ChatToolCall[];
  /** On a `tool` message: the call it answers. */
  tool_call_id?: string;
  name?: string;
}

/**
 * A constraint on what the model may write, enforced token by token: `json-schema` is `before`, then one compact
 * JSON value matching `schema` (`true` for any JSON value), then `after`, and nothing else; `any-of` is any one of
 * its grammars.
 */
export type OutputGrammar =
  | { kind: "json-schema"; schema: Record<string, unknown> | true; before?: string; after?: string }
  | { kind: "any-of"; grammars: OutputGrammar[] };

/** One generation request: a prompt (as tokens or chat messages) and how to sample from it. */
export interface GenRequest {
  /** Caller's id for matching results to requests. */
  id?: string;
  /** Prompt token ids; give this or `messages`. */
  promptTokens?: number[];
  /** Chat messages rendered with the model's chat template; give this or `promptTokens`. */
  messages?: GenMessage[];
  /** OpenAI `tools`, rendered by chat templates that have a tools section. */
  tools?: readonly object[];
  /** Constrains the output (structured output, required tool calls). */
  grammar?: OutputGrammar;
  /**
   * Scopes prefix caching, as vLLM's `cache_salt`: a prompt reuses cached keys and values only of prompts sent with the
   * same salt, e.g. one per tenant where one engine serves several. Default: one scope for all requests to the engine.
   */
  cacheSalt?: string;
  /** How many samples to draw for this prompt (default 1). */
  n?: number;
  /** Upper bound on generated tokens per sample (default 64). */
  maxTokens?: number;
  /** 0 means greedy (default 1). */
  temperature?: number;
  /** Nucleus sampling mass (default 1). */
  topP?: number;
  /** Keep only the k most likely tokens; 0 disables (default 0). */
  topK?: number;
  /** Generation stops before any of these strings; the stop string is not returned. */
  stop?: string[];
  /** Makes sampling reproducible: the same seed and weights give the same tokens. */
  seed?: number;
  /** Also return the this-many most likely tokens at each position, with their log-probs (default 0). */
  topLogprobs?: number;
  /** Keep sampling past end-of-turn tokens until maxTokens or a stop string (benchmarks, fixed-length rollouts). */
  ignoreEos?: boolean;
  /**
   * Added to a token's logit before sampling, by token id, each from -100 to 100 (OpenAI's `logit_bias`). With a
   * bias or a penalty, `outputLogprobs` are under the adjusted distribution, the one the tokens are drawn from.
   */
  logitBias?: Readonly<Record<number, number>>;
  /** Subtracted from a token's logit once per time it was already sampled in this output, -2 to 2 (default 0). */
  frequencyPenalty?: number;
  /** Subtracted from a token's logit once it has been sampled in this output, -2 to 2 (default 0). */
  presencePenalty?: number;
  /** Cancels this request only (e.g. its HTTP client went away); its samples end with finishReason `abort`. */
  signal?: AbortSignal;
}

/** Why a sample ended: `stop` (end-of-turn token or a stop string), `length` (maxTokens), `abort` (cancelled). */
export type FinishReason = "stop" | "length" | "abort";

/** One sample drawn for a request. A request with `n` samples yields `n` results with the same `requestId`. */
export interface GenResult {
  /** The request's `id`, echoed so results can be matched without relying on order. */
  requestId?: string;
  /** Which of the request's n samples this is. */
  sampleIndex: number;
  /** The decoded output, without a stop string that ended it. */
  text: string;
  /** Token ids of the prompt as the engine saw it (after the chat template), so training can reuse them exactly. */
  promptTokens: number[];
  /** Token ids the model produced, aligned with `outputLogprobs` and `outputVersions`. */
  outputTokens: number[];
  /** Log-prob of each output token under the policy that sampled it (the behaviour policy of PPO/GRPO). */
  outputLogprobs: number[];
  /** Weight version that produced each output token; a sample can span a `setWeights` (staleness accounting). */
  outputVersions: number[];
  /** Why the sample ended. */
  finishReason: FinishReason;
  /** Per output token, the most likely alternatives (only when the request asked for `topLogprobs`). */
  topLogprobs?: { token: number; logprob: number }[][];
}

/** One token as it is produced, for streaming; `textDelta` is text that can no longer change. */
export interface TokenEvent {
  /** Index of the request in the `generate` call. */
  requestIndex: number;
  /** Which of the request's n samples the token belongs to. */
  sampleIndex: number;
  /** The token id sampled. */
  token: number;
  /** Its log-prob under the policy that sampled it. */
  logprob: number;
  /** The weight version that sampled it. */
  version: number;
  /** New final text (held back while it could still be the start of a stop string or an unfinished character). */
  textDelta: string;
  /** Set on the last event of a sample. */
  finishReason?: FinishReason;
  /** Alternatives for this token when the request asked for `topLogprobs`. */
  topLogprobs?: { token: number; logprob: number }[];
}

/** Options of one `generate` call. */
export interface GenerateOptions {
  /** Aborting ends every unfinished sample of this call with finishReason `abort`. */
  signal?: AbortSignal;
  /** Called for every token as it is sampled (streaming). */
  onToken?: (event: TokenEvent) => void;
}

/** Where new weights come from: a checkpoint directory, or tensors handed over in memory. */
export type WeightSource =
  | { kind: "checkpoint"; dir: string }
  | { kind: "tensors"; tensors: Map<string, { shape: number[]; data: Float32Array }> };

/** How a model writes tool calls in text: Arc's byte models `{"tool","args"}` JSON, Hermes `<tool_call>` tags. */
export type ToolCallSyntax = "arc-json" | "hermes";

/** The generation role (embedded engine, vLLM/SGLang behind an OpenAI-compatible server): samples with versioned weights. */
export interface InferenceEngine {
  /** Batched generation: one result per sample, in request order then sample order. */
  generate(requests: GenRequest[], options?: GenerateOptions): Promise<GenResult[]>;
  /** The weight version that new tokens are sampled with. */
  getVersion(): number;
  /** The text format the served model writes tool calls in, when its chat template has one. */
  readonly toolCallSyntax?: ToolCallSyntax;
  /** Swaps in new weights; generation in flight pauses and resumes on the new version. */
  setWeights(version: number, weights: WeightSource): Promise<void>;
  /** Releases the process or connections the engine holds, if it holds any. */
  close?(): Promise<void>;
}

/** Sequences for log-prob computation: prompt followed by output, loss over the output. */
export interface TokenBatch {
  /** Prompt token ids per row. */
  promptTokens: number[][];
  /** Output token ids per row; log-probs and the loss are over these only. */
  outputTokens: number[][];
  /** Per output token; defaults to all ones. */
  lossMask?: number[][];
}

/** What `TrainEngine.step` optimises. Unset numeric fields take the defaults in their docs. */
export type Objective =
  | { kind: "sft" }
  | {
      kind: "dpo";
      /** Strength of the implicit KL constraint (default 0.1). */
      beta?: number;
      /** `sigmoid` is DPO (Rafailov et al. 2023, eq. 7); `ipo` is IPO (Azar et al. 2023, eq. 17). Default `sigmoid`. */
      loss?: "sigmoid" | "ipo";
      /** Entropy regularization: subtracts this times the mean per-token entropy of both responses (default 0). */
      entropyCoef?: number;
      /** Adds this times the mean per-token NLL of the chosen responses (RPO, Pang et al. 2024); default 0. */
      nllCoef?: number;
    }
  | {
      kind: "grpo";
      /** PPO clip range epsilon (default 0.2). */
      clipEpsilon?: number;
      /** Weight of the KL(policy || reference) penalty; 0 disables it (default 0). */
      klCoef?: number;
      /** Weight of the entropy bonus; 0 disables it (default 0). */
      entropyCoef?: number;
      /** `token`: mean over all tokens of the batch; `sequence`: mean per sequence, then over sequences; `dr-grpo`: sum / constant. Default `token`. */
      aggregation?: "token" | "sequence" | "dr-grpo";
      /**
       * AReaL's decoupled PPO objective for stale rollouts: clip the ratio against the proximal policy
       * (`proximalLogprobs`, or the policy as it is before this step) and weight each token by
       * pi_prox / pi_behaviour, the behaviour policy being `oldLogprobs` (default false).
       */
      decoupled?: boolean;
      /** With `decoupled`: tokens whose pi_prox / pi_behaviour exceeds this are left out (default: none are). */
      behaviourWeightCap?: number;
    };

/**
 * A training batch. For DPO, rows come in (chosen, rejected) pairs: row 2i is chosen, row 2i+1 is rejected.
 * For GRPO, `advantages` are given per row by the caller (already group-normalized).
 */
export interface TrainBatch extends TokenBatch {
  /** Per row (GRPO). */
  advantages?: number[];
  /** Behaviour-policy log-probs per output token (GRPO ratio; from GenResult.outputLogprobs). */
  oldLogprobs?: number[][];
  /** Reference-model log-probs per output token (DPO; GRPO KL). Computed by the engine when absent and needed. */
  refLogprobs?: number[][];
  /** Proximal-policy log-probs per output token (decoupled GRPO); the current policy's when absent. */
  proximalLogprobs?: number[][];
}

/** What one optimizer step did. */
export interface StepMetrics {
  /** Optimizer steps taken so far, this one included. */
  step: number;
  /** The objective's loss on this batch, before the update. */
  loss: number;
  /** Global gradient norm before clipping (a spike warns of divergence). */
  gradNorm: number;
  /** Learning rate used for this step (after warm-up/schedule). */
  learningRate: number;
  /** Output tokens that counted in the loss (`lossMask` 1). */
  tokens: number;
  /** Objective-specific figures (e.g. `rewardAccuracy`, `margin` for DPO; `clipFraction`, `kl`, `entropy` for GRPO). */
  extra: Record<string, number>;
}

/** The training role (embedded engine, or a VERL/TRL job): computes log-probs, takes optimizer steps, hands out weights. */
export interface TrainEngine {
  /** Log-prob of each output token under the current policy. */
  logprobs(batch: TokenBatch): Promise<Float32Array[]>;
  /** One optimizer step (AdamW, warm-up, gradient clipping as configured). */
  step(batch: TrainBatch, objective: Objective): Promise<StepMetrics>;
  /**
   * The current policy weights, for `InferenceEngine.setWeights`: in memory (embedded), or a checkpoint directory
   * the engine writes (an engine in another process, whose weights never cross its pipe).
   */
  weights(): WeightSource | Promise<WeightSource>;
  /** Writes a checkpoint in the Hugging Face layout, optimizer state beside it. */
  save(dir: string): Promise<void>;
  /** Restores weights, optimizer state and step counter from `save`'s directory. */
  load(dir: string): Promise<void>;
  /** Makes the current policy the reference model (used for DPO and the GRPO KL when refLogprobs are absent). */
  syncReference(): Promise<void>;
  /** Releases the threads or connections the engine holds, if it holds any. */
  close?(): Promise<void>;
}
