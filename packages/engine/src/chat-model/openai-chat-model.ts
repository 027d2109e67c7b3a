import {
  approximateTokenCounter,
  type ChatCompletion,
  type ChatModel,
  type CompleteOptions,
  type TeachMessage,
  type TokenCounter,
} from "@arc/core";
import { ChatModelError } from "./chat-model-error.ts";

/** Where and how to reach an OpenAI-compatible chat completions endpoint. */
export interface OpenAIChatModelOptions {
  /** Base URL that ends before `/chat/completions`, e.g. `http://127.0.0.1:8000/v1`. */
  baseURL: string;
  /** The `model` field of every request; also the name recorded on trace steps. */
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  apiKey?: string;
  /** Extra headers of every request (e.g. a tenant header of a gateway). */
  headers?: Record<string, string>;
  /** Injectable fetch (tests, proxies); default the global one. */
  fetch?: typeof fetch;
  /** Counts tokens when the endpoint returns no `usage` (default approximateTokenCounter). */
  tokenCounter?: TokenCounter;
}

interface CompletionBody {
  choices?: { message?: { content?: unknown }; finish_reason?: unknown; logprobs?: unknown }[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown };
}

const FINISH = new Set(["stop", "length"]);

/** The `error.message` of an OpenAI-style error body, else the start of the raw body. */
function upstreamMessage(raw: string): string {
  try {
    const message = (JSON.parse(raw) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message;
  } catch {
    // not JSON: the raw text is the best description there is
  }
  return raw.slice(0, 500);
}

/**
 * The teaching protocol's ChatModel over any OpenAI-compatible endpoint (`arc engine serve`, vLLM,
 * SGLang, the Arc gateway, OpenAI itself), through plain fetch. Errors become ChatModelError with the
 * upstream status and message; 429 and 5xx are marked retryable.
 */
export class OpenAIChatModel implements ChatModel {
  /** The name recorded on trace steps. */
  readonly model: string;
  private readonly url: string;
  private readonly fetch: typeof fetch;
  private readonly counter: TokenCounter;

  constructor(private readonly options: OpenAIChatModelOptions) {
    const base = URL.canParse(options.baseURL) ? new URL(options.baseURL) : undefined;
    if (base?.protocol !== "http:" && base?.protocol !== "https:")
      throw new ChatModelError(
        `baseURL: expected an absolute http(s) URL, got ${JSON.stringify(options.baseURL)}`,
      );
    if (!options.model) throw new ChatModelError("model: expected a non-empty model name");
    this.model = options.model;
    this.url = `${base.href.replace(/\/+$/, "")}/chat/completions`;
    this.fetch = options.fetch ?? globalThis.fetch;
    this.counter = options.tokenCounter ?? approximateTokenCounter;
  }

  /** POSTs one non-streaming completion; rejects with the signal's reason when it aborts. */
  async complete(messages: TeachMessage[], options: CompleteOptions): Promise<ChatCompletion> {
    let response: Response;
    try {
      response = await this.fetch(this.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          ...this.options.headers,
        },
        body: JSON.stringify({
          model: this.model,
          messages,
          max_tokens: options.maxTokens,
          temperature: options.temperature,
          ...(options.logprobs ? { logprobs: true, top_logprobs: options.logprobs.top } : {}),
        }),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (cause) {
      if (options.signal?.aborted) throw options.signal.reason;
      throw new ChatModelError(`${this.url} could not be reached: ${(cause as Error).message}`, { cause });
    }
    const raw = await response.text();
    if (!response.ok) {
      throw new ChatModelError(`${this.url} answered ${response.status}: ${upstreamMessage(raw)}`, {
        upstreamStatus: response.status,
      });
    }
    let body: CompletionBody;
    try {
      body = JSON.parse(raw) as CompletionBody;
    } catch (cause) {
      throw new ChatModelError(`${this.url} answered invalid JSON: ${raw.slice(0, 200)}`, { cause });
    }
    const choice = body.choices?.[0];
    const content = choice?.message?.content;
    if (!choice || !(typeof content === "string" || content === null || content === undefined))
      throw new ChatModelError(
        `${this.url} answered no choices[0].message.content string: ${raw.slice(0, 200)}`,
      );
    const text = content ?? "";
    const count = (value: unknown, fallback: () => number) =>
      Number.isInteger(value) && (value as number) >= 0 ? (value as number) : fallback();
    const finish = choice.finish_reason;
    return {
      text,
      promptTokens: count(body.usage?.prompt_tokens, () =>
        messages.reduce((n, m) => n + this.counter.count(m.content), 0),
      ),
      completionTokens: count(body.usage?.completion_tokens, () => this.counter.count(text)),
      ...(typeof finish === "string" && FINISH.has(finish)
        ? { finishReason: finish as "stop" | "length" }
        : {}),
      ...(options.logprobs ? { logprobs: choice.logprobs ?? null } : {}),
    };
  }
}
