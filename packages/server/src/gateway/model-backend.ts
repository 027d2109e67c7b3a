import type { InferenceEngine } from "@arc/core";
import { createEngineServer } from "@arc/engine";
import type { UpstreamModel } from "../store/model-registry.ts";

/** Something that answers OpenAI chat completion requests for one model version. */
export interface ModelBackend {
  /** `embedded` (in-process engine) or `upstream` (an OpenAI-compatible server). */
  readonly kind: "embedded" | "upstream";
  /**
   * Answers a chat completion body exactly as the model's server would: the status, headers and body (JSON or SSE)
   * come back untouched, errors included, so the gateway can forward them faithfully. `model` in the body is replaced
   * by the backend's own model name.
   */
  chat(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response>;
}

/** A backend over an engine in this process: the engine's OpenAI-compatible app, called without a socket. */
export function embeddedBackend(engine: InferenceEngine, modelId: string): ModelBackend {
  const app = createEngineServer(engine, { modelId });
  return {
    kind: "embedded",
    async chat(body, signal) {
      return app.fetch(
        new Request("http://embedded/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ ...body, model: modelId }),
          signal,
        }),
      );
    },
  };
}

/**
 * A backend over an OpenAI-compatible server (vLLM, SGLang, a hosted API, `arc engine serve`). `baseUrl` ends where
 * OpenAI's client base URL does (e.g. `http://host:8000/v1`); the key is read from `apiKeyEnv` at each call, so a
 * rotated key takes effect without a restart and is never stored.
 */
export function upstreamBackend(
  upstream: UpstreamModel,
  env: NodeJS.ProcessEnv = process.env,
  fetchImpl: typeof fetch = fetch,
): ModelBackend {
  const url = `${upstream.baseUrl.replace(/\/$/, "")}/chat/completions`;
  return {
    kind: "upstream",
    async chat(body, signal) {
      const key = upstream.apiKeyEnv ? env[upstream.apiKeyEnv] : undefined;
      return fetchImpl(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ ...body, model: upstream.model }),
        signal,
      });
    },
  };
}
