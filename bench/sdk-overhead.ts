// SDK overhead: the latency `wrapOpenAI` adds to a chat completion, measured with the official `openai` client
// against a local OpenAI-compatible test server, wrapped and unwrapped calls interleaved in the same run (in
// random order per pair), with the exporter shipping the traces to a local collector as it would in production.
// Called by bench/backbone.bench.ts; also runnable alone: node --import tsx bench/sdk-overhead.ts
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import OpenAI from "openai";
import { createArc } from "../packages/sdk/src/index.ts";
import { CollectorTestServer } from "../packages/sdk/src/test-doubles/collector-test-server.ts";
import { OpenAITestServer } from "../packages/sdk/src/test-doubles/openai-test-server.ts";
import { pairedCalls } from "./paired-calls.ts";
import { writeBenchResults } from "./results-file.ts";

/** Options of `measureSdkOverhead`. */
export interface SdkOverheadOptions {
  /** Measured calls per client (each client makes this many). Default 2000. */
  calls?: number;
  /** Unmeasured calls per client first, to warm up the JIT and the connection pools. Default 200. */
  warmup?: number;
  /** Stream the completions (`stream: true` with usage), reading every chunk. Default false. */
  stream?: boolean;
}

/** Added latency per call (wrapped minus unwrapped), with the figures it is computed from. */
export interface SdkOverhead {
  calls: number;
  stream: boolean;
  /** Median added latency: wrappedP50Ms - unwrappedP50Ms. */
  p50Ms: number;
  /** 99th-percentile added latency: wrappedP99Ms - unwrappedP99Ms. */
  p99Ms: number;
  unwrappedP50Ms: number;
  wrappedP50Ms: number;
  unwrappedP99Ms: number;
  wrappedP99Ms: number;
  /**
   * The unwrapped client measured alone before Arc existed in the process: compared with unwrappedP50Ms/P99Ms it
   * shows what the exporter's background work (serializing, posting) costs calls it does not trace.
   */
  baselineP50Ms: number;
  baselineP99Ms: number;
  /** Median and p99 of the per-pair difference (each wrapped call minus the unwrapped call next to it); noisier. */
  pairedP50Ms: number;
  pairedP99Ms: number;
  /** What the exporter did meanwhile (every traced call should have been sent). */
  exporter: { sent: number; dropped: number; failed: number; retried: number; pending: number };
}

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/**
 * A prompt the size of a small agent's turn: system prompt, a few turns, a tool call and its result, one tool
 * (bench/agent-turn.json, which the in-process measurement reads too).
 */
export const agentTurn = JSON.parse(
  readFileSync(new URL("./agent-turn.json", import.meta.url), "utf8"),
) as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

/** Measures the added latency per wrapped call; see the file header. */
export async function measureSdkOverhead(options: SdkOverheadOptions = {}): Promise<SdkOverhead> {
  const { calls = 2000, warmup = 200, stream = false } = options;
  const provider = await OpenAITestServer.start();
  provider.reply = () => ({ content: "Your order ships tomorrow; the invoice is attached to your account." });
  const collector = await CollectorTestServer.start();
  const plain = new OpenAI({ baseURL: provider.url, apiKey: "bench", maxRetries: 0 });

  const call = async (client: OpenAI): Promise<number> => {
    const started = performance.now();
    if (stream) {
      const chunks = await client.chat.completions.create({
        ...agentTurn,
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const _ of chunks);
    } else {
      await client.chat.completions.create(agentTurn);
    }
    return performance.now() - started;
  };

  try {
    for (let i = 0; i < warmup; i++) await call(plain);
    const baselineMs: number[] = [];
    for (let i = 0; i < calls; i++) baselineMs.push(await call(plain));
    baselineMs.sort((x, y) => x - y);

    const arc = createArc({
      baseUrl: collector.url,
      apiKey: "bench",
      flushIntervalMs: 100,
      onWarning: () => {},
    });
    const wrapped = arc.wrapOpenAI(new OpenAI({ baseURL: provider.url, apiKey: "bench", maxRetries: 0 }));
    for (let i = 0; i < warmup; i++) {
      await call(plain);
      await call(wrapped);
    }
    const { a: unwrappedMs, b: wrappedMs } = await pairedCalls(
      () => call(plain),
      () => call(wrapped),
      calls,
    );
    const pairedMs = wrappedMs.map((w, i) => w - unwrappedMs[i]);
    await arc.shutdown({ timeoutMs: 10_000 });
    for (const list of [unwrappedMs, wrappedMs, pairedMs]) list.sort((x, y) => x - y);
    const u50 = quantile(unwrappedMs, 0.5);
    const w50 = quantile(wrappedMs, 0.5);
    const u99 = quantile(unwrappedMs, 0.99);
    const w99 = quantile(wrappedMs, 0.99);
    return {
      calls,
      stream,
      p50Ms: round(w50 - u50),
      p99Ms: round(w99 - u99),
      unwrappedP50Ms: round(u50),
      wrappedP50Ms: round(w50),
      unwrappedP99Ms: round(u99),
      wrappedP99Ms: round(w99),
      baselineP50Ms: round(quantile(baselineMs, 0.5)),
      baselineP99Ms: round(quantile(baselineMs, 0.99)),
      pairedP50Ms: round(quantile(pairedMs, 0.5)),
      pairedP99Ms: round(quantile(pairedMs, 0.99)),
      exporter: arc.stats(),
    };
  } finally {
    await Promise.all([provider.close(), collector.close()]);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = [];
  for (const stream of [false, true]) {
    const r = await measureSdkOverhead({ stream });
    results.push(r);
    console.log(
      `SDK overhead per wrapped call (${r.stream ? "streamed" : "non-streamed"}, ${r.calls} calls each, interleaved): ` +
        `p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms  [unwrapped p50 ${r.unwrappedP50Ms} / p99 ${r.unwrappedP99Ms} ms; ` +
        `wrapped p50 ${r.wrappedP50Ms} / p99 ${r.wrappedP99Ms} ms; no Arc in the process p50 ${r.baselineP50Ms} / ` +
        `p99 ${r.baselineP99Ms} ms; per-pair p50 ${r.pairedP50Ms} / p99 ${r.pairedP99Ms} ms; ` +
        `traces sent ${r.exporter.sent}, dropped ${r.exporter.dropped}, failed ${r.exporter.failed}]`,
    );
  }
  const [plain, stream] = results;
  console.log("wrote", writeBenchResults("sdk-overhead", { plain, stream }));
}
