import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type {
  GenerateOptions,
  GenRequest,
  GenResult,
  InferenceEngine,
  ToolCallSyntax,
  WeightSource,
} from "@arc/core";
import { withWeightsDirectory } from "../checkpoint/weights-directory.ts";
import { type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";

/** Where the server is and what it serves. */
export interface RemoteEngineOptions {
  /** The server's OpenAI base URL, e.g. `http://127.0.0.1:8000/v1` (vLLM, SGLang or `arc engine serve`). */
  url: string;
  /** The served model's name (`model` of each request); default: the first the server lists at `/v1/models`. */
  model?: string;
  apiKey?: string;
  /**
   * The checkpoint the run starts from: its tokenizer and chat template render chat messages here, and its weights
   * are pushed to the server at connect, as weight version `version`.
   */
  modelDir: string;
  version?: number;
  /**
   * How new weights reach the server: `disk` (default) posts a checkpoint directory to SGLang's
   * `/update_weights_from_disk`; `lora` loads the checkpoint's `adapter/` (PEFT) with vLLM's `/v1/load_lora_adapter`
   * as `<model>-v<version>` and samples from it by that name, keeping the previous adapter until the next one loads.
   */
  weightSync?: "disk" | "lora";
  /**
   * The sampling route: `completions` (default), vLLM's OpenAI `/v1/completions` with token ids; or `sglang`,
   * SGLang's native `/generate` (`input_ids`, `return_logprob`), whose weight updates are wrapped in
   * `/pause_generation` (`in_place`) and `/continue_generation`. `sglang` takes `weightSync: disk` only.
   */
  api?: "completions" | "sglang";
}

/** One sample of SGLang's `/generate` answer, the fields read here. */
interface SglangSample {
  text: string;
  output_ids: number[];
  meta_info: {
    finish_reason: { type: string } | null;
    weight_version?: string | null;
    /** Arc's extension (`arc engine serve`): the weight version of each output token. */
    output_token_weight_versions?: number[];
    output_token_logprobs?: [number, number, string | null][];
    output_top_logprobs?: ([number, number, string | null][] | null)[];
  };
}

/** One choice of vLLM's `/v1/completions` answer, the fields read here. */
interface CompletionChoice {
  index: number;
  text: string;
  finish_reason: string | null;
  token_ids?: number[];
  weight_versions?: number[];
  logprobs: {
    tokens: string[];
    token_logprobs: (number | null)[];
    top_logprobs?: (Record<string, number> | null)[];
  } | null;
}

/** A request's sampling settings as a rollout route takes them, under that route's names for the token limit and seed. */
function samplingBody(r: GenRequest, names: { maxTokens: string; seed: string }): Record<string, unknown> {
  return {
    n: r.n ?? 1,
    [names.maxTokens]: r.maxTokens ?? 64,
    temperature: r.temperature ?? 1,
    top_p: r.topP ?? 1,
    ...(r.topK ? { top_k: r.topK } : {}),
    ...(r.seed === undefined ? {} : { [names.seed]: r.seed }),
    ...(r.stop?.length ? { stop: r.stop } : {}),
    ignore_eos: r.ignoreEos ?? false,
    ...(r.logitBias && Object.keys(r.logitBias).length > 0 ? { logit_bias: r.logitBias } : {}),
    ...(r.frequencyPenalty ? { frequency_penalty: r.frequencyPenalty } : {}),
    ...(r.presencePenalty ? { presence_penalty: r.presencePenalty } : {}),
  };
}

/** A token id from vLLM's `token_id:<id>` placeholder. */
function tokenId(label: string): number {
  const match = /^token_id:(\d+)$/.exec(label);
  if (!match)
    throw new Error(`logprobs.tokens: expected token_id:<id> (return_tokens_as_token_ids), got "${label}"`);
  return Number(match[1]);
}

/**
 * An InferenceEngine on an inference server over HTTP, for RL rollouts: prompts go in as token ids on vLLM's
 * `/v1/completions` and come back as token ids with per-token log-probs (`return_tokens_as_token_ids`); new weights
 * reach the server as a checkpoint directory through SGLang's `/update_weights_from_disk`, so the server must read
 * the paths this process writes (the same machine or shared storage), or, with `weightSync: "lora"`, as LoRA adapters
 * through vLLM's `/v1/load_lora_adapter`. Each sample's tokens carry the weight version the server reports
 * (`arc engine serve` updated from disk), else the version its request was sent to.
 */
export class RemoteInferenceEngine implements InferenceEngine {
  private version: number;
  private readonly root: string;
  /** The name requests sample from: the served model's, or the newest adapter's. */
  private model = "";
  private servedModel = "";
  /** Adapters loaded on the server by this engine, oldest first. */
  private readonly adapters: string[] = [];
  /** Tells this engine's adapters from another run's on the same server. */
  private readonly nonce = randomBytes(3).toString("hex");

  private constructor(
    private readonly options: RemoteEngineOptions,
    private readonly tokenizer: ChatTokenizer,
  ) {
    this.version = options.version ?? 0;
    this.root = options.url.replace(/\/+$/, "").replace(/\/v1$/, "");
  }

  /** Checks the server is up, and loads the starting checkpoint's weights on it. */
  static async connect(options: RemoteEngineOptions): Promise<RemoteInferenceEngine> {
    if (options.api === "sglang" && options.weightSync === "lora")
      throw new Error(
        "generator.api sglang takes weightSync disk: LoRA adapters are pushed through vLLM's /v1/load_lora_adapter (api completions)",
      );
    const engine = new RemoteInferenceEngine(options, await loadChatTokenizer(options.modelDir));
    const health = await engine.request("GET", "/health").catch((error: Error) => {
      throw new Error(`${options.url}: no inference server answers there (${error.message})`);
    });
    if (!health.ok) throw new Error(`${engine.root}/health: the server answered ${health.status}`);
    engine.servedModel = options.model ?? (await engine.firstListedModel());
    engine.model = engine.servedModel;
    // with LoRA the server serves the starting model itself, unless that is a checkpoint with an adapter
    if (options.weightSync !== "lora" || existsSync(join(options.modelDir, "adapter", "adapter_config.json")))
      await engine.setWeights(engine.version, { kind: "checkpoint", dir: options.modelDir });
    return engine;
  }

  /** The first model the server lists. */
  private async firstListedModel(): Promise<string> {
    const res = await this.request("GET", "/v1/models");
    const listed = (await res.json().catch(() => ({}))) as { data?: { id?: string }[] };
    const id = listed.data?.[0]?.id;
    if (!res.ok || typeof id !== "string")
      throw new Error(
        `${this.root}/v1/models: expected the served models, got ${res.status}; name one with model`,
      );
    return id;
  }

  private async request(
    method: string,
    path: string,
    body?: object,
    signal?: AbortSignal,
  ): Promise<Response> {
    try {
      return await this.send(method, path, body, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`${(error as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ""}`);
    }
  }

  private send(method: string, path: string, body?: object, signal?: AbortSignal): Promise<Response> {
    return fetch(`${this.root}${path}`, {
      method,
      headers: {
        "content-type": "application/json",
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  }

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    if (options.onToken)
      throw new TypeError(
        "onToken: the remote engine takes whole samples from /v1/completions; it does not stream",
      );
    const perRequest = await Promise.all(requests.map((r, i) => this.one(r, i, options.signal)));
    return perRequest.flat();
  }

  private async one(r: GenRequest, i: number, callSignal: AbortSignal | undefined): Promise<GenResult[]> {
    const promptTokens = r.messages ? this.tokenizer.render(r.messages, { tools: r.tools }) : r.promptTokens;
    if (!promptTokens) throw new TypeError(`requests[${i}]: expected promptTokens or messages`);
    if (r.grammar) throw new TypeError(`requests[${i}].grammar: the remote engine takes no grammar`);
    const n = r.n ?? 1;
    const sentAt = this.version;
    const signals = [callSignal, r.signal].filter((s): s is AbortSignal => s !== undefined);
    const aborted = (): GenResult[] =>
      Array.from({ length: n }, (_, sampleIndex) => ({
        requestId: r.id,
        sampleIndex,
        text: "",
        promptTokens,
        outputTokens: [],
        outputLogprobs: [],
        outputVersions: [],
        finishReason: "abort" as const,
      }));
    const signal = signals.length > 0 ? AbortSignal.any(signals) : undefined;
    try {
      return this.options.api === "sglang"
        ? await this.sampleSglang(r, promptTokens, sentAt, signal)
        : await this.sampleCompletions(r, promptTokens, sentAt, signal);
    } catch (error) {
      if (signals.some((s) => s.aborted)) return aborted();
      throw error;
    }
  }

  /** Posts a rollout request and reads its JSON answer; a failure names the route and what the server said. */
  private async sample(path: string, body: object, signal: AbortSignal | undefined): Promise<unknown> {
    let res: Response;
    try {
      res = await this.request("POST", path, body, signal);
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new Error(`${this.root}${path}: ${(error as Error).message}`);
    }
    const answer = (await res.json().catch(() => null)) as {
      error?: { message?: string } | string;
      message?: string;
    } | null;
    if (!res.ok) {
      const said =
        typeof answer?.error === "string" ? answer.error : (answer?.error?.message ?? answer?.message);
      throw new Error(`${this.root}${path}: ${res.status} ${said ?? res.statusText}`);
    }
    return answer;
  }

  /** Samples through vLLM's `/v1/completions`, token ids in and out. */
  private async sampleCompletions(
    r: GenRequest,
    promptTokens: number[],
    sentAt: number,
    signal: AbortSignal | undefined,
  ): Promise<GenResult[]> {
    const n = r.n ?? 1;
    const answer = (await this.sample(
      "/v1/completions",
      {
        model: this.model,
        prompt: promptTokens,
        ...samplingBody(r, { maxTokens: "max_tokens", seed: "seed" }),
        logprobs: r.topLogprobs ?? 0,
        return_tokens_as_token_ids: true,
        return_token_ids: true,
        return_weight_versions: true,
      },
      signal,
    )) as { choices?: CompletionChoice[] } | null;
    const choices = [...(answer?.choices ?? [])].sort((a, b) => a.index - b.index);
    if (choices.length !== n)
      throw new Error(`${this.root}/v1/completions: expected ${n} choices, got ${choices.length}`);
    return choices.map((choice, sampleIndex) => {
      const logprobs = choice.logprobs;
      if (!logprobs) throw new Error(`${this.root}/v1/completions: choice ${choice.index} has no logprobs`);
      const outputTokens = choice.token_ids ?? logprobs.tokens.map(tokenId);
      const k = r.topLogprobs ?? 0;
      return {
        requestId: r.id,
        sampleIndex,
        text: choice.text,
        promptTokens,
        outputTokens,
        outputLogprobs: logprobs.token_logprobs.map((x) => x ?? Number.NEGATIVE_INFINITY),
        // an adapter is one version for all its tokens; a server updated from disk says which version sampled each
        outputVersions:
          this.options.weightSync === "lora" || !choice.weight_versions
            ? outputTokens.map(() => sentAt)
            : choice.weight_versions,
        finishReason:
          choice.finish_reason === "length" ? "length" : choice.finish_reason === "abort" ? "abort" : "stop",
        ...(k > 0
          ? {
              topLogprobs: (logprobs.top_logprobs ?? []).map((top) =>
                Object.entries(top ?? {})
                  .map(([label, logprob]) => ({ token: tokenId(label), logprob }))
                  .sort((a, b) => b.logprob - a.logprob)
                  .slice(0, k),
              ),
            }
          : {}),
      };
    });
  }

  /** Samples through SGLang's `/generate`: `input_ids` in, `output_ids` and `output_token_logprobs` out. */
  private async sampleSglang(
    r: GenRequest,
    promptTokens: number[],
    sentAt: number,
    signal: AbortSignal | undefined,
  ): Promise<GenResult[]> {
    const n = r.n ?? 1;
    const k = r.topLogprobs ?? 0;
    const answer = (await this.sample(
      "/generate",
      {
        input_ids: promptTokens,
        sampling_params: samplingBody(r, { maxTokens: "max_new_tokens", seed: "sampling_seed" }),
        return_logprob: true,
        ...(k > 0 ? { top_logprobs_num: k } : {}),
      },
      signal,
    )) as SglangSample | SglangSample[];
    const samples = Array.isArray(answer) ? answer : [answer as SglangSample];
    if (samples.length !== n)
      throw new Error(`${this.root}/generate: expected ${n} samples, got ${samples.length}`);
    return samples.map((sample, sampleIndex) => {
      const logprobs = sample.meta_info?.output_token_logprobs;
      if (!logprobs)
        throw new Error(`${this.root}/generate: sample ${sampleIndex} has no output_token_logprobs`);
      const outputTokens = sample.output_ids;
      const finish = sample.meta_info.finish_reason?.type;
      return {
        requestId: r.id,
        sampleIndex,
        text: sample.text,
        promptTokens,
        outputTokens,
        outputLogprobs: logprobs.map(([logprob]) => logprob ?? Number.NEGATIVE_INFINITY),
        // without Arc's per-token versions, every token counts as sampled by the version the request was sent to:
        // a request a weight update overtook then counts as staler than it is, never fresher
        outputVersions: sample.meta_info.output_token_weight_versions ?? outputTokens.map(() => sentAt),
        finishReason: finish === "length" ? "length" : finish === "abort" ? "abort" : "stop",
        ...(k > 0
          ? {
              topLogprobs: (sample.meta_info.output_top_logprobs ?? []).map((top) =>
                (top ?? [])
                  .map(([logprob, token]) => ({ token, logprob }))
                  .sort((a, b) => b.logprob - a.logprob)
                  .slice(0, k),
              ),
            }
          : {}),
      };
    });
  }

  get toolCallSyntax(): ToolCallSyntax | undefined {
    return this.tokenizer.toolCallSyntax;
  }

  getVersion(): number {
    return this.version;
  }

  /** Pushes new weights: a checkpoint directory the server reads, or tensors written to a temporary one first. */
  async setWeights(version: number, weights: WeightSource): Promise<void> {
    if (this.options.weightSync === "lora") {
      await this.loadAdapter(version, weights);
    } else {
      await withWeightsDirectory(weights, this.options.modelDir, (dir) => this.loadFromDisk(version, dir));
    }
    this.version = version;
  }

  private async loadAdapter(version: number, weights: WeightSource): Promise<void> {
    const adapter = weights.kind === "checkpoint" ? join(resolve(weights.dir), "adapter") : undefined;
    if (!adapter || !existsSync(join(adapter, "adapter_config.json")))
      throw new Error(
        `weightSync lora: the weights of version ${version} have no adapter/ in PEFT's layout (train with engine.lora)`,
      );
    const name = `${this.servedModel}-${this.nonce}-v${version}`;
    const res = await this.request("POST", "/v1/load_lora_adapter", { lora_name: name, lora_path: adapter });
    if (!res.ok) {
      const text = await res.text();
      let message = text;
      try {
        message = JSON.parse(text).error?.message ?? text;
      } catch {}
      throw new Error(
        `${this.root}/v1/load_lora_adapter (${adapter}): ${res.status} ${message}${res.status === 404 ? " (is LoRA enabled on the server? arc engine serve --enable-lora, vLLM --enable-lora with VLLM_ALLOW_RUNTIME_LORA_UPDATING)" : ""}`,
      );
    }
    this.model = name;
    this.adapters.push(name);
    // the previous adapter stays for the requests still sampling from it; the one before goes
    while (this.adapters.length > 2) {
      const old = this.adapters.shift() as string;
      await this.request("POST", "/v1/unload_lora_adapter", { lora_name: old });
    }
  }

  private async loadFromDisk(version: number, dir: string): Promise<void> {
    // SGLang updates at once while paused in place: requests in flight wait, then go on with the new weights
    const paused = this.options.api === "sglang";
    if (paused) await this.control("/pause_generation", { mode: "in_place" });
    let res: Response;
    try {
      res = await this.request("POST", "/update_weights_from_disk", {
        model_path: dir,
        weight_version: String(version),
        // SGLang: once paused in place, flushing the cache (the update's default) does not succeed
        ...(paused ? { flush_cache: false } : {}),
      });
    } finally {
      if (paused) await this.control("/continue_generation", {});
    }
    const answer = (await res.json().catch(() => ({}))) as { success?: boolean; message?: string };
    if (!res.ok || answer.success !== true)
      throw new Error(
        `${this.root}/update_weights_from_disk (${dir}): ${res.status} ${answer.message ?? res.statusText}${res.status === 404 ? " (start arc engine serve with --allow-weight-updates)" : ""}`,
      );
  }

  /** Posts to one of SGLang's control routes, failing with what the server answered. */
  private async control(path: string, body: object): Promise<void> {
    const res = await this.request("POST", path, body);
    if (!res.ok)
      throw new Error(
        `${this.root}${path}: ${res.status} ${await res.text()}${res.status === 404 ? " (start arc engine serve with --allow-weight-updates)" : ""}`,
      );
  }

  /** Unloads the adapters this engine loaded; the server outlives the run. */
  async close(): Promise<void> {
    for (const name of this.adapters.splice(0))
      await this.request("POST", "/v1/unload_lora_adapter", { lora_name: name }).catch(() => {});
  }
}
