import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { InferenceEngine } from "@arc/core";
import { createEngineServer } from "@arc/engine";
import type { UpstreamModel } from "../store/model-registry.ts";
import { answerFromResponse, type ModelAnswer } from "./model-answer.ts";
import { openAiError } from "./openai-error.ts";

/** Something that answers OpenAI chat completion requests for one model version. */
export interface ModelBackend {
  /** `embedded` (in-process engine) or `upstream` (an OpenAI-compatible server). */
  readonly kind: "embedded" | "upstream";
  /**
   * Answers a chat completion body exactly as the model's server would: the status, headers and body (JSON or SSE)
   * come back untouched, errors included, so the gateway can forward them faithfully. An upstream gets its own model
   * name in the body (and answers with it); the embedded engine answers with the name the client asked for.
   */
  chat(body: Record<string, unknown>, signal?: AbortSignal, cacheScope?: string): Promise<ModelAnswer>;
}

/**
 * The `cache_salt` an in-process engine gets for a call of `cacheScope` (e.g. a tenant): the scope, joined with the
 * client's own salt where it sent one, so that no call reuses the cached prefixes of another scope's prompts.
 */
export function scopedCacheSalt(cacheScope: string | undefined, clientSalt: unknown): string | undefined {
  if (cacheScope === undefined) return typeof clientSalt === "string" ? clientSalt : undefined;
  return typeof clientSalt === "string" ? `${cacheScope}\u0000${clientSalt}` : cacheScope;
}

/**
 * The fewest tokens the embedded engine's chat template can make of `messages`, when one token stands for at most
 * `longestTokenBytes` bytes of text: each text's UTF-8 bytes over that, one for the role and one for the end of each
 * message, and the two around the conversation. With Arc's byte-level tokenizer (1) it is exact for the text.
 */
function leastPromptTokens(messages: unknown, longestTokenBytes: number): number {
  if (!Array.isArray(messages)) return 0;
  let tokens = 2;
  for (const message of messages) {
    const content = (message as { content?: unknown } | null)?.content;
    tokens += 2;
    if (typeof content === "string") tokens += Math.ceil(Buffer.byteLength(content) / longestTokenBytes);
    else if (Array.isArray(content)) {
      for (const part of content) {
        const text = (part as { text?: unknown } | null)?.text;
        if (typeof text === "string") tokens += Math.ceil(Buffer.byteLength(text) / longestTokenBytes);
      }
    }
  }
  return tokens;
}

/** OpenAI's answer to a prompt that leaves a model no room to reply. */
function contextLengthExceeded(contextTokens: number, tokens: number): ModelAnswer {
  return openAiError(
    400,
    `This model's maximum context length is ${contextTokens} tokens. However, your messages resulted in at least ${tokens} tokens, which leaves no room for a reply. Please reduce the length of the messages.`,
    "invalid_request_error",
    "context_length_exceeded",
    "messages",
  );
}

/** What bounds an embedded engine's prompts: its context, and the most bytes of text one of its tokens stands for. */
export interface PromptBound {
  contextTokens: number;
  longestTokenBytes: number;
}

/**
 * A backend over an engine in this process: the engine's OpenAI-compatible app, called without a socket. With the
 * engine's `bound`, a prompt that surely cannot fit is answered 400 `context_length_exceeded`, as OpenAI answers it,
 * before the engine tokenizes it (the engine answers the same for one that does not fit once tokenized).
 */
export function embeddedBackend(engine: InferenceEngine, modelId: string, bound?: PromptBound): ModelBackend {
  const app = createEngineServer(engine, { modelId, acceptAnyModel: true });
  return {
    kind: "embedded",
    async chat(body, signal, cacheScope) {
      if (bound) {
        const tokens = leastPromptTokens(body.messages, bound.longestTokenBytes);
        if (tokens >= bound.contextTokens) return contextLengthExceeded(bound.contextTokens, tokens);
      }
      const response = await app.fetch(
        new Request("http://embedded/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            ...body,
            model: body.model ?? modelId,
            cache_salt: scopedCacheSalt(cacheScope, body.cache_salt),
          }),
          signal,
        }),
      );
      return answerFromResponse(response);
    },
  };
}

/** Whether a content type is server-sent events (a streamed completion). */
function isEventStream(contentType: string | undefined): boolean {
  return (contentType ?? "").includes("text/event-stream");
}

const agents = {
  "http:": new HttpAgent({ keepAlive: true, maxSockets: 256 }),
  "https:": new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
};

/**
 * A backend over an OpenAI-compatible server (vLLM, SGLang, a hosted API, `arc engine serve`). `baseUrl` ends where
 * OpenAI's client base URL does (e.g. `http://host:8000/v1`); the key is read from `apiKeyEnv` at each call, so a
 * rotated key takes effect without a restart and is never stored. Calls go through node:http with keep-alive
 * connections (about half the per-call cost of `fetch`), with the request's options made once; a streamed answer
 * streams through as it arrives, a JSON answer is read whole first.
 */
export function upstreamBackend(upstream: UpstreamModel, env: NodeJS.ProcessEnv = process.env): ModelBackend {
  const url = new URL(`${upstream.baseUrl.replace(/\/$/, "")}/chat/completions`);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const target: RequestOptions = {
    protocol: url.protocol,
    hostname: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    method: "POST",
    agent: url.protocol === "https:" ? agents["https:"] : agents["http:"],
  };
  return {
    kind: "upstream",
    chat(body, signal) {
      const key = upstream.apiKeyEnv ? env[upstream.apiKeyEnv] : undefined;
      const payload = JSON.stringify({ ...body, model: upstream.model });
      return new Promise<ModelAnswer>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const req = send(
          {
            ...target,
            headers: {
              "content-type": "application/json",
              "content-length": Buffer.byteLength(payload),
              ...(key ? { authorization: `Bearer ${key}` } : {}),
            },
          },
          (res) => {
            const headers = res.headers as Record<string, string | string[]>;
            const status = res.statusCode ?? 502;
            if (isEventStream(res.headers["content-type"])) {
              resolve({ status, headers, body: res });
              return;
            }
            // a whole JSON answer is read here, so that no stream is handed on for it
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.once("end", () => resolve({ status, headers, body: Buffer.concat(chunks) }));
            res.once("error", reject);
          },
        );
        if (signal) {
          // cheaper than handing node:http the signal, which watches the whole stream's end to let go of it
          const abort = () => req.destroy(signal.reason);
          signal.addEventListener("abort", abort, { once: true });
          req.once("close", () => signal.removeEventListener("abort", abort));
        }
        req.once("error", reject);
        req.end(payload);
      });
    },
  };
}
