// The SDK wrapper's own cost per call, measured in one process with no network: the official `openai` client, plain
// and wrapped by `wrapOpenAI`, both answered from memory by the client's `fetch` option, calls paired (random order
// per pair), on the same agent turn as sdk-overhead.ts, the exporter shipping every trace to an in-memory collector
// as it would to Arc. The per-pair difference (wrapped − unwrapped) is the time the capture path adds; the bytes it
// allocates per call are the heap's growth over a stretch of calls with no garbage collection in it, wrapped less
// unwrapped.
// Called by bench/backbone.bench.ts; also runnable alone: node --import tsx bench/sdk-capture-cost.ts
import { PerformanceObserver } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import OpenAI from "openai";
import { createArc } from "../packages/sdk/src/index.ts";
import { pairedCalls } from "./paired-calls.ts";
import { agentTurn } from "./sdk-overhead.ts";

/** The wrapper's cost per call. */
export interface SdkCaptureCost {
  /** Pairs measured. */
  pairs: number;
  /** p50 and p99 of the per-pair difference, wrapped − unwrapped, in ms. */
  p50Ms: number;
  p99Ms: number;
  /** The unwrapped call's own p50 (the client's work over an in-memory answer), for scale. */
  unwrappedP50Ms: number;
  /** Heap bytes the wrapper allocates per call (wrapped less unwrapped). */
  bytesPerCall: number;
  /** Traces the exporter sent (every wrapped call should have been). */
  tracesSent: number;
}

const answer = JSON.stringify({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 1,
  model: "bench-model",
  choices: [
    {
      index: 0,
      message: { role: "assistant", content: "Your order ships tomorrow." },
      finish_reason: "stop",
    },
  ],
  usage: { prompt_tokens: 120, completion_tokens: 6, total_tokens: 126 },
});

/** The provider, answered from memory. */
const providerFetch = async () =>
  new Response(answer, { status: 200, headers: { "content-type": "application/json" } });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** `global.gc`, made available without a command-line flag. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Measures the wrapper's cost; see the file header. */
export async function measureSdkCaptureCost(options: { pairs?: number } = {}): Promise<SdkCaptureCost> {
  const pairs = options.pairs ?? 5000;
  const arc = createArc({
    baseUrl: "http://collector.invalid",
    apiKey: "bench",
    flushIntervalMs: 100,
    onWarning: () => {},
    fetch: async () => new Response("{}", { status: 200, headers: { "content-type": "application/json" } }),
  });
  const plain = new OpenAI({ apiKey: "bench", baseURL: "http://provider.invalid/v1", fetch: providerFetch });
  const wrapped = arc.wrapOpenAI(
    new OpenAI({ apiKey: "bench", baseURL: "http://provider.invalid/v1", fetch: providerFetch }),
  );
  const time = async (client: OpenAI) => {
    const started = performance.now();
    await client.chat.completions.create(agentTurn);
    return performance.now() - started;
  };

  for (let i = 0; i < 1000; i++) {
    await time(plain);
    await time(wrapped);
  }
  const times = await pairedCalls(
    () => time(plain),
    () => time(wrapped),
    pairs,
  );
  const unwrapped = times.a;
  const differences = times.b.map((b, i) => b - times.a[i]);
  differences.sort((x, y) => x - y);
  unwrapped.sort((x, y) => x - y);

  const gc = collector();
  /** When each garbage collection started (performance.now() time). */
  const collections: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collections.push(entry.startTime);
  });
  observer.observe({ entryTypes: ["gc"] });
  /** Heap growth per call over `n` calls with no collection in between (retried until none happens). */
  const grows = async (client: OpenAI, n: number): Promise<number> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      await arc.flush();
      gc();
      const from = performance.now();
      const start = process.memoryUsage().heapUsed;
      for (let i = 0; i < n; i++) await client.chat.completions.create(agentTurn);
      const end = process.memoryUsage().heapUsed;
      const to = performance.now();
      // the observer hears of a collection a little later
      await new Promise((r) => setTimeout(r, 20));
      if (!collections.some((at) => at > from && at < to)) return (end - start) / n;
    }
    throw new Error("sdk capture cost: a garbage collection ran in every stretch of calls; try fewer calls");
  };
  const growth: number[] = [];
  for (let i = 0; i < 5; i++) growth.push((await grows(wrapped, 50)) - (await grows(plain, 50)));
  observer.disconnect();
  growth.sort((x, y) => x - y);
  await arc.shutdown({ timeoutMs: 10_000 });
  const tracesSent = arc.stats().sent;
  const round = (ms: number) => Math.round(ms * 10_000) / 10_000;
  return {
    pairs,
    p50Ms: round(percentile(differences, 50)),
    p99Ms: round(percentile(differences, 99)),
    unwrappedP50Ms: round(percentile(unwrapped, 50)),
    bytesPerCall: Math.round(growth[Math.floor(growth.length / 2)]),
    tracesSent,
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await measureSdkCaptureCost());
}
