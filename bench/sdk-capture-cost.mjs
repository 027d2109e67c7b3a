// The SDK wrapper's own cost per call, in one process with no network, on the SDK as `npm pack` ships it: the
// compiled packages/sdk/dist (made by `npm run build`) on plain Node, with no TypeScript loader. The official `openai`
// client, plain and wrapped by `wrapOpenAI`, is answered from memory by the client's `fetch` option, on the agent turn
// of bench/agent-turn.json, the exporter shipping every trace to an in-memory collector as it would to Arc.
//
// Three figures per call:
// - capture: the time spent in the wrapper's own code, timed around it (the call's synchronous part less the
//   client's own, and the two hooks the wrapper runs when the client parses the answer). Never negative.
// - paired: wrapped minus unwrapped time end to end, calls paired in random order; it counts what the wrapper makes
//   the client wait for beyond its own code (promise hops), and is as noisy as the client.
// - noise: the same pairing with two plain clients (A/A), the floor under which a paired figure means nothing.
// Bytes: the heap's growth per call over stretches of calls with no garbage collection in them, wrapped less plain.
// Prints one JSON line. Called by bench/backbone.bench.ts after `npm run build`:
// node bench/sdk-capture-cost.mjs [pairs]
import { readFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import OpenAI from "openai";
import { createArc } from "../packages/sdk/dist/index.js";
import { LlmCall } from "../packages/sdk/dist/openai/llm-call.js";

const agentTurn = JSON.parse(readFileSync(new URL("./agent-turn.json", import.meta.url), "utf8"));
const pairs = Number(process.argv[2] ?? 3000);

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
const client = () =>
  new OpenAI({ apiKey: "bench", baseURL: "http://provider.invalid/v1", fetch: providerFetch });

const arc = createArc({
  baseUrl: "http://collector.invalid",
  apiKey: "bench",
  flushIntervalMs: 100,
  onWarning: () => {},
  fetch: async () => new Response("{}", { status: 200, headers: { "content-type": "application/json" } }),
});

// The time the wrapper spends in its own code: the client it wraps has its synchronous `create` timed, so that the
// wrapper's part of the call is told apart; the hooks it runs at the parse step are timed where they run.
const inner = client();
const innerCreate = inner.chat.completions.create.bind(inner.chat.completions);
let innerMs = 0;
let hooksMs = 0;
inner.chat.completions.create = (...args) => {
  const started = performance.now();
  try {
    return innerCreate(...args);
  } finally {
    innerMs += performance.now() - started;
  }
};
for (const hook of ["noteResponse", "succeed"]) {
  const original = LlmCall.prototype[hook];
  LlmCall.prototype[hook] = function (...args) {
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      hooksMs += performance.now() - started;
    }
  };
}
const wrapped = arc.wrapOpenAI(inner);
const plain = client();
const plain2 = client();

/** One call: its time end to end, and for a wrapped one the time in the wrapper's code. */
async function call(c) {
  innerMs = 0;
  hooksMs = 0;
  const started = performance.now();
  const pending = c.chat.completions.create(agentTurn);
  const syncMs = performance.now() - started;
  await pending;
  return { ms: performance.now() - started, captureMs: syncMs - innerMs + hooksMs };
}

/** `n` pairs of calls (`a` then `b` or `b` then `a`, at random); per pair the difference b − a and b's capture time. */
async function paired(a, b, n) {
  const differences = [];
  const capture = [];
  const aMs = [];
  for (let i = 0; i < n; i++) {
    let x;
    let y;
    if (Math.random() < 0.5) {
      x = await call(a);
      y = await call(b);
    } else {
      y = await call(b);
      x = await call(a);
    }
    differences.push(y.ms - x.ms);
    capture.push(y.captureMs);
    aMs.push(x.ms);
  }
  return { differences, capture, aMs };
}

const sorted = (xs) => [...xs].sort((p, q) => p - q);
const at = (xs, p) => {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (ms) => Math.round(ms * 10_000) / 10_000;

for (let i = 0; i < 1000; i++) {
  await call(plain);
  await call(plain2);
  await call(wrapped);
}
const measured = await paired(plain, wrapped, pairs);
const noise = await paired(plain, plain2, pairs);

/** `global.gc`, made available without a command-line flag. */
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const collections = [];
const observer = new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) collections.push(entry.startTime);
});
observer.observe({ entryTypes: ["gc"] });
/** Heap growth per call over `n` calls with no collection in between (retried until none happens). */
async function grows(c, n) {
  for (let attempt = 0; attempt < 20; attempt++) {
    await arc.flush();
    gc();
    const from = performance.now();
    const start = process.memoryUsage().heapUsed;
    for (let i = 0; i < n; i++) await c.chat.completions.create(agentTurn);
    const end = process.memoryUsage().heapUsed;
    const to = performance.now();
    // the observer hears of a collection a little later
    await new Promise((r) => setTimeout(r, 20));
    if (!collections.some((t) => t > from && t < to)) return (end - start) / n;
  }
  throw new Error("sdk capture cost: a garbage collection ran in every stretch of calls; try fewer calls");
}
const growth = [];
for (let i = 0; i < 5; i++) growth.push((await grows(wrapped, 50)) - (await grows(plain, 50)));
observer.disconnect();
await arc.shutdown({ timeoutMs: 10_000 });

process.stdout.write(
  `${JSON.stringify({
    pairs,
    captureP50Ms: round(at(measured.capture, 50)),
    captureP99Ms: round(at(measured.capture, 99)),
    pairedP50Ms: round(at(measured.differences, 50)),
    pairedP99Ms: round(at(measured.differences, 99)),
    noiseP50Ms: round(at(noise.differences, 50)),
    noiseP99Ms: round(at(noise.differences, 99)),
    unwrappedP50Ms: round(at(measured.aMs, 50)),
    bytesPerCall: Math.round(at(growth, 50)),
    tracesSent: arc.stats().sent,
  })}\n`,
);
