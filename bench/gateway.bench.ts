// npm run bench:gateway: the latency Arc's gateway adds to each call, and the throughput it keeps, against an upstream
// that answers every call after a fixed 20 ms (bench/fixed-latency-upstream.ts), with LiteLLM's proxy and a bare
// Node.js pass-through proxy (bench/bare-proxy.ts, the least any Node.js gateway can cost here) measured the same way
// in the same run. Each runs in a process of its own: the upstream; `arc serve` as installed (the compiled packages,
// built first, on plain Node: bench/arc-serve-compiled.mjs), every call recorded as a trace and judged by its
// detection worker, on PGlite, then on a PostgreSQL server when ARC_TEST_DATABASE_URL names one; LiteLLM's proxy
// (while Arc is stopped); the bare proxy; and this load generator.
//
// Overhead: `c` workers each make pairs of calls, one straight to the upstream and one through a gateway, in random
// order. A call's own time is its time end to end less the time the upstream held it (noted by the upstream per call),
// so the upstream timer's jitter is no gateway's; the overhead of a pair is the gateway call's own time minus the
// direct call's. Reported: p50 and p99 of those per-pair differences at c = 1, 16 and 64, the median over rounds with
// their spread, beside an A/A run (direct against direct) that shows the measurement's own noise. Throughput: calls
// per second with 32 in flight for a few seconds, through each gateway and straight to the upstream, one after the
// other in each round; the ratio is the median over rounds of the ratios measured in the same round.
// Arc's figures are also written over the bare proxy's of the same run (`*_vs_bare`), on PGlite and on PostgreSQL,
// with the load averages at the start and the end: on a shared machine the ratios are the figures that compare.
// Usage: npm run bench:gateway [-- --rounds N --seconds S --no-litellm]
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { withFreshPostgresDatabase } from "./fresh-postgres-database.ts";
import { startLiteLlmProxy } from "./litellm-proxy.ts";
import { median } from "./median.ts";
import { loadAverages, writeBenchResults } from "./results-file.ts";

/** Where the load goes: a `/v1` URL and its key. */
interface Target {
  name: string;
  url: string;
  key: string;
}

/** A figure's median over rounds with the smallest and largest round. */
interface Spread {
  median: number;
  min: number;
  max: number;
}

/** One gateway's paired overheads at one concurrency. */
interface OverheadFigures {
  concurrency: number;
  pairs_per_round: number;
  p50_ms: Spread;
  p99_ms: Spread;
}

const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const upstreamLatencyMs = 20;
const concurrencies = [1, 16, 64] as const;
/** Pairs each worker makes per round, by concurrency (300, 480 and 640 pairs in all). */
const pairsPerWorker: Record<number, number> = { 1: 300, 16: 30, 64: 10 };

let callCounter = 0;

/** One chat completion; resolves with its tag and its time end to end in ms. */
function call(target: Target): Promise<{ tag: string; ms: number }> {
  const tag = `${process.pid}-${++callCounter}`;
  const body = JSON.stringify({
    model: "bench-model",
    messages: [{ role: "user", content: `What is the weather in Oslo? [call ${tag}]` }],
    max_tokens: 32,
  });
  const url = new URL(`${target.url}/chat/completions`);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      url,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${target.key}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const ms = performance.now() - started;
          if (res.statusCode !== 200) {
            reject(
              new Error(`${target.name} answered ${res.statusCode}: ${Buffer.concat(chunks).toString()}`),
            );
          } else resolve({ tag, ms });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Per-call times the upstream held, by tag (read and cleared). */
async function heldTimes(upstreamUrl: string): Promise<Record<string, number>> {
  const res = await fetch(`${upstreamUrl.replace(/\/v1$/, "")}/held`);
  return (await res.json()) as Record<string, number>;
}

/** `workers` workers each make `pairs` pairs (a on one side, b on the other, in random order); per-pair b − a. */
async function pairedRound(
  upstreamUrl: string,
  a: Target,
  b: Target,
  workers: number,
  pairs: number,
): Promise<{ p50: number; p99: number }> {
  const made: { a: { tag: string; ms: number }; b: { tag: string; ms: number } }[] = [];
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let i = 0; i < pairs; i++) {
        if (Math.random() < 0.5) {
          const x = await call(a);
          made.push({ a: x, b: await call(b) });
        } else {
          const y = await call(b);
          made.push({ a: await call(a), b: y });
        }
      }
    }),
  );
  const held = await heldTimes(upstreamUrl);
  const own = (x: { tag: string; ms: number }) => {
    const h = held[x.tag];
    if (h === undefined) throw new Error(`the upstream noted no time for call ${x.tag}`);
    return x.ms - h;
  };
  const differences = made.map((m) => own(m.b) - own(m.a));
  return { p50: percentile(differences, 50), p99: percentile(differences, 99) };
}

async function throughput(target: Target, seconds: number, inFlight = 32): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        await call(target);
        done++;
      }
    }),
  );
  return done / seconds;
}

function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ child: ChildProcess; info: Record<string, string> }> {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ child, info: JSON.parse(line) });
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}: ${out}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  child.kill("SIGTERM");
  return exited;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const spread = (xs: number[]): Spread => ({
  median: round3(median(xs)),
  min: round3(Math.min(...xs)),
  max: round3(Math.max(...xs)),
});

/** Traces Arc's gateway has stored, from its /metrics. */
async function tracesStored(arcUrl: string): Promise<number> {
  const text = await (await fetch(`${arcUrl.replace(/\/v1$/, "")}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith('arc_gateway_traces_total{outcome="stored"}'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

/** Figures of the gateways measured together: overheads by concurrency, throughputs, the A/A noise. */
async function measure(options: { upstream: Target; gateways: Target[]; rounds: number; seconds: number }) {
  const { upstream, gateways } = options;
  for (const target of [upstream, ...gateways]) for (let i = 0; i < 200; i++) await call(target);
  await heldTimes(upstream.url);
  const calls: Record<string, number> = Object.fromEntries(gateways.map((g) => [g.name, 200]));
  const samples = new Map<string, { p50: number[]; p99: number[] }>();
  const note = (key: string, r: { p50: number; p99: number }) => {
    const s = samples.get(key) ?? { p50: [], p99: [] };
    s.p50.push(r.p50);
    s.p99.push(r.p99);
    samples.set(key, s);
  };
  const ratios = new Map<string, number[]>();
  /** Per round, each gateway's throughput over the bare proxy's in that round (when the bare proxy is measured). */
  const ratiosVsBare = new Map<string, number[]>();
  const rps = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, key: string, x: number) =>
    map.set(key, [...(map.get(key) ?? []), x]);
  for (let round = 0; round < options.rounds; round++) {
    note("aa/1", await pairedRound(upstream.url, upstream, upstream, 1, pairsPerWorker[1]));
    for (const c of concurrencies) {
      const order = round % 2 === 0 ? gateways : [...gateways].reverse();
      for (const gateway of order) {
        const started = performance.now();
        const figures = await pairedRound(upstream.url, upstream, gateway, c, pairsPerWorker[c]);
        note(`${gateway.name}/${c}`, figures);
        calls[gateway.name] += c * pairsPerWorker[c];
        console.log(
          `  round ${round + 1}, ${gateway.name}, c = ${c}: p50 +${round3(figures.p50)} ms, p99 +${round3(figures.p99)} ms (${Math.round((performance.now() - started) / 1000)} s)`,
        );
      }
    }
    const direct = await throughput(upstream, options.seconds);
    push(rps, "upstream", direct);
    const roundRps = new Map<string, number>();
    for (const gateway of gateways) {
      const through = await throughput(gateway, options.seconds);
      calls[gateway.name] += Math.round(through * options.seconds);
      roundRps.set(gateway.name, through);
      push(rps, gateway.name, through);
      push(ratios, gateway.name, through / direct);
      console.log(
        `  round ${round + 1}, ${gateway.name}: ${Math.round(through)} calls/s with 32 in flight, the upstream alone ${Math.round(direct)}`,
      );
    }
    const bareRps = roundRps.get("bare");
    if (bareRps) {
      for (const [name, through] of roundRps)
        if (name !== "bare") push(ratiosVsBare, name, through / bareRps);
    }
  }
  const overheads = (name: string): OverheadFigures[] =>
    concurrencies.map((c) => ({
      concurrency: c,
      pairs_per_round: c * pairsPerWorker[c],
      p50_ms: spread(samples.get(`${name}/${c}`)?.p50 ?? []),
      p99_ms: spread(samples.get(`${name}/${c}`)?.p99 ?? []),
    }));
  return {
    noise: { p50_ms: spread(samples.get("aa/1")?.p50 ?? []), p99_ms: spread(samples.get("aa/1")?.p99 ?? []) },
    overheads: Object.fromEntries(gateways.map((g) => [g.name, overheads(g.name)])),
    ratios: Object.fromEntries([...ratios].map(([k, v]) => [k, spread(v)])),
    ratiosVsBare: Object.fromEntries([...ratiosVsBare].map(([k, v]) => [k, spread(v)])),
    rps: Object.fromEntries([...rps].map(([k, v]) => [k, Math.round(median(v))])),
    calls,
  };
}

type Measured = Awaited<ReturnType<typeof measure>>;

/** Prints one table row per gateway of `m`, under `label`. */
function printTable(label: string, m: Measured, names: Record<string, string>): void {
  console.log(
    `\n${label}: added ms p50 / p99 per call (median over rounds); throughput with 32 in flight over the upstream's`,
  );
  console.log("| | c = 1 | c = 16 | c = 64 | throughput vs upstream |");
  console.log("|---|---|---|---|---|");
  for (const [name, o] of Object.entries(m.overheads)) {
    const ratio = m.ratios[name];
    console.log(
      `| ${names[name] ?? name} | ${o.map((x) => `+${x.p50_ms.median} / +${x.p99_ms.median}`).join(" | ")} | ${ratio.median} (${ratio.min}-${ratio.max}) |`,
    );
  }
  console.log(
    `A/A noise (direct against direct, c = 1): p50 ${m.noise.p50_ms.median} ms, p99 ${m.noise.p99_ms.median} ms; calls/s: ${Object.entries(
      m.rps,
    )
      .map(([k, v]) => `${names[k] ?? k} ${v}`)
      .join(", ")}`,
  );
}

const names = {
  arc: "Arc",
  litellm: "LiteLLM",
  bare: "bare Node proxy (the floor)",
  upstream: "upstream alone",
};

/**
 * Starts `arc serve` as installed (bench/arc-serve-compiled.mjs) in a home of its own, on PGlite or the PostgreSQL
 * database at `databaseUrl`, with the upstream allowed (ARC_UPSTREAMS); registers the upstream's model as the default
 * tenant's production model over the API. Resolves with the process and the tenant's `/v1` URL and key.
 */
async function startArc(upstreamUrl: string, databaseUrl?: string) {
  const home = mkdtempSync(join(tmpdir(), "arc-gateway-bench-"));
  const child = spawn(
    process.execPath,
    ["bench/arc-serve-compiled.mjs", "serve", "--port", "0", "--home", home],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: {
        ...process.env,
        ARC_UPSTREAMS: JSON.stringify({ bench: { baseUrl: upstreamUrl } }),
        ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      },
    },
  );
  child.once("exit", () => rmSync(home, { recursive: true, force: true }));
  const { url, key } = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const url = /listening at (http:\/\/\S+)/.exec(out)?.[1];
      const key = /API key: (\S+)/.exec(out)?.[1];
      if (url && key) resolve({ url, key });
    });
    child.once("exit", (code) => reject(new Error(`arc serve exited with ${code}: ${out}`)));
  });
  const registered = await fetch(`${url}/v1/model-versions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      // registered under the upstream's own name, so that one body (`model: "bench-model"`) suits every target
      name: "bench-model",
      status: "promoted",
      upstream: { name: "bench", model: "bench-model" },
    }),
  });
  if (!registered.ok) throw new Error(`registering the upstream model: ${await registered.text()}`);
  return { child, target: { name: "arc", url: `${url}/v1`, key } };
}

/** Compiles the packages (`npm run build`), so that `arc serve` runs what `npm pack` would ship. */
function buildPackages(): void {
  const built = spawnSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
  if (built.status !== 0) throw new Error(`npm run build failed (exit ${built.status})`);
}

/**
 * Runs the whole benchmark; prints the tables and writes bench/results/gateway.json. Each gateway runs alone beside
 * the upstream (and the bare proxy beside Arc, which costs nothing idle): Arc on PGlite, then LiteLLM, then Arc on
 * a PostgreSQL store when ARC_TEST_DATABASE_URL names a server.
 */
export async function runGatewayBench(
  options: { rounds?: number; seconds?: number; litellm?: boolean } = {},
) {
  const rounds = options.rounds ?? 5;
  const seconds = options.seconds ?? 5;
  const loadAverageStart = loadAverages();
  buildPackages();
  const upstreamProcess = await startProcess(
    ["bench/fixed-latency-upstream.ts", String(upstreamLatencyMs)],
    {},
  );
  const upstream: Target = { name: "upstream", url: upstreamProcess.info.url, key: "none" };
  try {
    console.log(`gateway bench: ${rounds} rounds, the upstream answers after ${upstreamLatencyMs} ms`);
    const arc = await startArc(upstream.url);
    const bareProcess = await startProcess(["bench/bare-proxy.ts", upstream.url], {});
    const bare: Target = { name: "bare", url: bareProcess.info.url, key: "none" };
    let pglite: Measured;
    let stored: number;
    try {
      console.log("Arc on PGlite, beside a bare Node.js proxy");
      pglite = await measure({ upstream, gateways: [arc.target, bare], rounds, seconds });
      // traces are written after the answers: wait up to 10 s for the last batch
      const deadline = Date.now() + 10_000;
      stored = await tracesStored(arc.target.url);
      while (stored < pglite.calls.arc && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        stored = await tracesStored(arc.target.url);
      }
    } finally {
      await Promise.all([stop(arc.child), stop(bareProcess.child)]);
    }
    printTable("Arc on PGlite", pglite, names);
    console.log(`traces recorded by Arc's gateway: ${stored} of ${pglite.calls.arc} calls`);

    const proxy = options.litellm === false ? null : await startLiteLlmProxy(upstream.url);
    let litellm: Measured | null = null;
    if (proxy) {
      try {
        console.log(`LiteLLM ${proxy.version}, alone`);
        litellm = await measure({
          upstream,
          gateways: [{ name: "litellm", url: proxy.url, key: proxy.key }],
          rounds,
          seconds,
        });
      } finally {
        await proxy.close();
      }
      printTable(`LiteLLM ${proxy.version}`, litellm, names);
    }

    const postgres = await withFreshPostgresDatabase("arc_bench_gateway", async (databaseUrl) => {
      const pg = await startArc(upstream.url, databaseUrl);
      const pgBare = await startProcess(["bench/bare-proxy.ts", upstream.url], {});
      try {
        console.log("Arc on a PostgreSQL store, beside a bare Node.js proxy");
        return await measure({
          upstream,
          gateways: [pg.target, { name: "bare", url: pgBare.info.url, key: "none" }],
          rounds,
          seconds,
        });
      } finally {
        await Promise.all([stop(pg.child), stop(pgBare.child)]);
      }
    });
    if (postgres) printTable("Arc on PostgreSQL", postgres, names);

    const at = (o: OverheadFigures[] | undefined, c: number, p: "p50_ms" | "p99_ms") =>
      o?.find((x) => x.concurrency === c)?.[p].median ?? null;
    /** Arc's figure over the bare proxy's, both medians over rounds of one run; null when either is missing or ≤ 0. */
    const vsBare = (m: Measured, c: number, p: "p50_ms" | "p99_ms") => {
      const arc = at(m.overheads.arc, c, p);
      const bare = at(m.overheads.bare, c, p);
      return arc === null || bare === null || bare <= 0 ? null : round3(arc / bare);
    };
    const ratiosToBare = (m: Measured) => ({
      overhead_p50_vs_bare: vsBare(m, 1, "p50_ms"),
      overhead_p99_vs_bare: vsBare(m, 1, "p99_ms"),
      overhead_p50_c16_vs_bare: vsBare(m, 16, "p50_ms"),
      overhead_p99_c16_vs_bare: vsBare(m, 16, "p99_ms"),
      throughput_vs_bare: m.ratiosVsBare.arc?.median ?? null,
    });
    console.log("Arc over the bare proxy, on PGlite:", ratiosToBare(pglite));
    if (postgres) console.log("Arc over the bare proxy, on PostgreSQL:", ratiosToBare(postgres));
    const figures = {
      overhead_p50_ms: at(pglite.overheads.arc, 1, "p50_ms"),
      overhead_p99_ms: at(pglite.overheads.arc, 1, "p99_ms"),
      overhead_p99_c16_ms: at(pglite.overheads.arc, 16, "p99_ms"),
      overhead_p99_c64_ms: at(pglite.overheads.arc, 64, "p99_ms"),
      throughput_ratio_vs_upstream: pglite.ratios.arc.median,
      ...ratiosToBare(pglite),
      load_average_start: loadAverageStart,
      load_average_end: loadAverages(),
      litellm_overhead_p50_ms: at(litellm?.overheads.litellm, 1, "p50_ms"),
      litellm_overhead_p99_ms: at(litellm?.overheads.litellm, 1, "p99_ms"),
      litellm_throughput_ratio_vs_upstream: litellm?.ratios.litellm.median ?? null,
      litellm_version: proxy?.version ?? null,
      upstream_latency_ms: upstreamLatencyMs,
      rounds,
      throughput_seconds: seconds,
      noise_aa_c1: pglite.noise,
      rps: { ...pglite.rps, litellm: litellm?.rps.litellm ?? null },
      arc: pglite.overheads.arc,
      bare_proxy: pglite.overheads.bare,
      bare_proxy_throughput_ratio_vs_upstream: pglite.ratios.bare.median,
      litellm: litellm?.overheads.litellm ?? null,
      litellm_noise_aa_c1: litellm?.noise ?? null,
      traces_recorded: stored,
      arc_calls: pglite.calls.arc,
      postgres: postgres
        ? {
            overhead_p50_ms: at(postgres.overheads.arc, 1, "p50_ms"),
            overhead_p99_ms: at(postgres.overheads.arc, 1, "p99_ms"),
            overhead_p99_c16_ms: at(postgres.overheads.arc, 16, "p99_ms"),
            overhead_p99_c64_ms: at(postgres.overheads.arc, 64, "p99_ms"),
            throughput_ratio_vs_upstream: postgres.ratios.arc.median,
            ...ratiosToBare(postgres),
            arc: postgres.overheads.arc,
            bare_proxy: postgres.overheads.bare,
            bare_proxy_throughput_ratio_vs_upstream: postgres.ratios.bare.median,
          }
        : null,
    };
    console.log("wrote", writeBenchResults("gateway", figures));
    return figures;
  } finally {
    await stop(upstreamProcess.child);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: { rounds: { type: "string" }, seconds: { type: "string" }, "no-litellm": { type: "boolean" } },
  });
  await runGatewayBench({
    rounds: values.rounds ? Number(values.rounds) : undefined,
    seconds: values.seconds ? Number(values.seconds) : undefined,
    litellm: !values["no-litellm"],
  });
}
