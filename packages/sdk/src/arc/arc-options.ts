import { ArcConfigError } from "../errors/arc-sdk-error.ts";
import type { FetchLike } from "../export/exporter.ts";

/** Options of `createArc`. Every field is optional; `baseUrl` and `apiKey` fall back to the environment. */
export interface ArcOptions {
  /** The Arc server, e.g. `http://127.0.0.1:7300` (without `/v1`). Default: `$ARC_URL`. */
  baseUrl?: string;
  /** The tenant API key sent as `Authorization: Bearer <key>`. Default: `$ARC_API_KEY`. */
  apiKey?: string;
  /** False turns the SDK into a pass-through that sends nothing (and needs no URL or key). Default true. */
  enabled?: boolean;
  /** The `fetch` used to reach Arc (a proxy-aware one, or another runtime's). Default: `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Traces per `POST /v1/traces` request. Default 100. */
  maxBatchSize?: number;
  /** About how many bytes of JSON one request may carry (a bigger single trace is sent alone). Default 1 MB. */
  maxBatchBytes?: number;
  /** How long a trace may wait to be batched with others before it is sent. Default 1000 ms. */
  flushIntervalMs?: number;
  /** Traces and feedback held while Arc is slow or down; past it the oldest are dropped (and counted). Default 10,000. */
  maxQueueSize?: number;
  /** Retries of a request that failed with a server error (500, 408, timeout) before its items are given up. Network errors, 429, 502, 503 and 504 are retried without limit. Default 8. */
  maxRetries?: number;
  /** First retry delay; it doubles per consecutive failure, with jitter. Default 500 ms. */
  initialBackoffMs?: number;
  /** Longest retry delay (a larger `Retry-After`, up to 60 s, is honoured). Default 30,000 ms. */
  maxBackoffMs?: number;
  /** Abandon a request to Arc after this long (it is then retried). Default 10,000 ms. */
  requestTimeoutMs?: number;
  /** How long a trace whose function returned waits for steps still running (e.g. a stream read later). Default 30,000 ms. */
  lateStepTimeoutMs?: number;
  /** Send what is buffered when the event loop empties (`beforeExit`). Default true. */
  flushOnExit?: boolean;
  /** How long the exit flush may keep the process alive. Default 2000 ms. */
  exitFlushTimeoutMs?: number;
  /** Where the SDK reports trouble (Arc unreachable, a batch rejected); rate-limited. Default `console.warn`. */
  onWarning?: (message: string) => void;
}

/** `ArcOptions` with every default applied and every value checked. */
export type ResolvedArcOptions = Required<Omit<ArcOptions, "baseUrl" | "apiKey">> & {
  baseUrl: string;
  apiKey: string;
};

const DEFAULTS = {
  enabled: true,
  maxBatchSize: 100,
  maxBatchBytes: 1_000_000,
  flushIntervalMs: 1000,
  maxQueueSize: 10_000,
  maxRetries: 8,
  initialBackoffMs: 500,
  maxBackoffMs: 30_000,
  requestTimeoutMs: 10_000,
  lateStepTimeoutMs: 30_000,
  flushOnExit: true,
  exitFlushTimeoutMs: 2000,
};

const COUNTS = ["maxBatchSize", "maxBatchBytes", "maxQueueSize"] as const;
const DURATIONS = [
  "flushIntervalMs",
  "initialBackoffMs",
  "maxBackoffMs",
  "requestTimeoutMs",
  "lateStepTimeoutMs",
  "exitFlushTimeoutMs",
] as const;

function describe(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** Applies defaults and the environment (`ARC_URL`, `ARC_API_KEY`); throws `ArcConfigError` naming the bad field. */
export function resolveArcOptions(
  options: ArcOptions = {},
  env: Record<string, string | undefined> = {},
): ResolvedArcOptions {
  const merged = { ...DEFAULTS, ...options };
  for (const field of COUNTS) {
    const v = merged[field];
    if (!Number.isInteger(v) || v < 1)
      throw new ArcConfigError(field, `expected a positive integer, got ${describe(v)}`);
  }
  if (!Number.isInteger(merged.maxRetries) || merged.maxRetries < 0)
    throw new ArcConfigError("maxRetries", `expected an integer >= 0, got ${describe(merged.maxRetries)}`);
  for (const field of DURATIONS) {
    const v = merged[field];
    if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
      throw new ArcConfigError(field, `expected a number of milliseconds >= 0, got ${describe(v)}`);
  }
  const fetchImpl = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);
  const onWarning = options.onWarning ?? ((message: string) => console.warn(message));
  const baseUrl = options.baseUrl ?? env.ARC_URL ?? "";
  const apiKey = options.apiKey ?? env.ARC_API_KEY ?? "";
  if (merged.enabled) {
    if (!baseUrl) throw new ArcConfigError("baseUrl", "missing: pass { baseUrl } or set ARC_URL");
    let url: URL;
    try {
      url = new URL(baseUrl);
    } catch {
      throw new ArcConfigError(
        "baseUrl",
        `expected an http(s) URL such as http://127.0.0.1:7300, got ${describe(baseUrl)}`,
      );
    }
    if (url.protocol !== "http:" && url.protocol !== "https:")
      throw new ArcConfigError("baseUrl", `expected an http(s) URL, got ${describe(baseUrl)}`);
    if (!apiKey) throw new ArcConfigError("apiKey", "missing: pass { apiKey } or set ARC_API_KEY");
    if (typeof fetchImpl !== "function")
      throw new ArcConfigError("fetch", "no global fetch in this runtime: pass { fetch }");
  }
  return {
    ...merged,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    apiKey,
    fetch: fetchImpl as FetchLike,
    onWarning,
  };
}
