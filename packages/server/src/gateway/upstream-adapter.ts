import type { UpstreamModel } from "../store/model-registry.ts";
import { discardAnswer } from "./model-answer.ts";
import { type ModelBackend, upstreamBackend } from "./model-backend.ts";

/** A model version served as a LoRA adapter on a base model's upstream server. */
export type AdapterUpstream = UpstreamModel & { adapter: NonNullable<UpstreamModel["adapter"]> };

/** Whether an upstream model is an adapter on a shared base. */
export function isAdapterUpstream(upstream: UpstreamModel | null): upstream is AdapterUpstream {
  return upstream?.adapter !== undefined;
}

/** How long an upstream may take to load or unload an adapter. */
const ADAPTER_CALL_TIMEOUT_MS = 60_000;

async function post(
  upstream: UpstreamModel,
  route: string,
  body: object,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number; text: string }> {
  const key = upstream.apiKeyEnv ? env[upstream.apiKeyEnv] : undefined;
  const res = await fetch(`${upstream.baseUrl.replace(/\/$/, "")}/${route}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ADAPTER_CALL_TIMEOUT_MS),
  }).catch((error: Error) => {
    throw new Error(
      error.name === "TimeoutError"
        ? `${upstream.baseUrl}/${route}: no answer within ${ADAPTER_CALL_TIMEOUT_MS / 1000} s`
        : `${upstream.baseUrl}/${route}: ${error.message}`,
    );
  });
  return { status: res.status, text: await res.text() };
}

/**
 * Registers the adapter on its upstream under its served name, through vLLM's `POST /v1/load_lora_adapter`
 * (`{lora_name, lora_path}`; vLLM needs `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`). One already loaded under that name
 * counts as loaded. Returns the milliseconds the upstream took.
 */
export async function loadAdapter(
  upstream: AdapterUpstream,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const started = performance.now();
  const { status, text } = await post(
    upstream,
    "load_lora_adapter",
    { lora_name: upstream.model, lora_path: upstream.adapter.path },
    env,
  );
  if (status !== 200 && !(status === 400 && text.includes("already been loaded")))
    throw new Error(
      `${upstream.baseUrl}/load_lora_adapter answered ${status} for adapter ${upstream.adapter.path}: ${text.slice(0, 300)}${status === 404 ? " (does the upstream load adapters at run time? vLLM: --enable-lora with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True; arc engine serve: --enable-lora)" : ""}`,
    );
  return performance.now() - started;
}

/** Takes the adapter off its upstream (`POST /v1/unload_lora_adapter`); one the upstream no longer has is gone already. */
export async function unloadAdapter(
  upstream: AdapterUpstream,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const { status, text } = await post(upstream, "unload_lora_adapter", { lora_name: upstream.model }, env);
  if (status !== 200 && status !== 404)
    throw new Error(
      `${upstream.baseUrl}/unload_lora_adapter answered ${status} for ${upstream.model}: ${text.slice(0, 300)}`,
    );
}

/**
 * A backend over an adapter on its upstream. When the upstream answers 404 (it restarted, or another gateway process
 * unloaded the adapter), the adapter is loaded again and the request sent once more.
 */
export function adapterBackend(
  upstream: AdapterUpstream,
  env: NodeJS.ProcessEnv = process.env,
  /** Told the milliseconds of each load again. */
  onLoad: (ms: number) => void = () => {},
): ModelBackend {
  const inner = upstreamBackend(upstream, env);
  return {
    kind: "upstream",
    async chat(body, signal) {
      const first = await inner.chat(body, signal);
      if (first.status !== 404) return first;
      await discardAnswer(first);
      onLoad(await loadAdapter(upstream, env));
      return inner.chat(body, signal);
    },
  };
}
