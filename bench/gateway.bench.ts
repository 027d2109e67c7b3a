// Gateway overhead: the latency the gateway adds to a chat completion versus calling the same model directly, with
// direct and gateway calls interleaved in one run (random order per pair, one call in flight), for an upstream
// model (gateway -> HTTP -> model server) and an embedded one (gateway -> the engine in-process; direct = the
// engine's own HTTP server). The overhead is the paired per-call difference (gateway call minus the direct call of
// the same pair), its p50 and p99; the difference of the two arms' p99s is reported beside it, labelled as such
// (it can even be negative, since the two tails need not come from the same pairs). Then requests/s through the gateway with 32 calls in flight. The server runs in its own
// process (bench/gateway-bench-server.ts), traces recorded to PGlite as in production.
// Called by bench/backbone.bench.ts; also runnable alone: node --import tsx bench/gateway.bench.ts
import { type ChildProcess, spawn } from "node:child_process";
import { loadavg } from "node:os";
import { pathToFileURL } from "node:url";
import { withFreshPostgresDatabase } from "./fresh-postgres-database.ts";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";

interface BenchServer {
  gatewayUrl: string;
  directUrl: string;
  upstreamKey: string;
  embeddedKey: string;
}

/** The figures `runGatewayBench` measures. */
export interface GatewayBench {
  /** p50 of the paired per-call difference, gateway minus direct (median over runs). */
  gateway_overhead_p50_ms: number;
  /** p99 of the paired per-call difference (median over runs): includes both calls' noise, so it overstates a little. */
  gateway_overhead_p99_ms: number;
  /** p99(gateway) − p99(direct): not a per-call overhead, since the two tails need not come from the same pairs. */
  gateway_p99_minus_direct_p99_ms: number;
  gateway_rps: number;
  direct_rps: number;
  /** The overheads are the median of this many interleaved runs (each arm's). */
  gateway_runs: number;
  embedded_overhead_p50_ms: number;
  embedded_overhead_p99_ms: number;
  /** The same figures with a PostgreSQL server as the store (null when ARC_TEST_DATABASE_URL is not set). */
  postgres: Record<string, number> | null;
  /** The machine's 1-minute load average at the end: p99 figures on a busy 2-core machine are mostly its noise. */
  load_average_1m: number;
  runs: {
    mode: string;
    directP50: number;
    gatewayP50: number;
    directP99: number;
    gatewayP99: number;
    pairedP50: number;
    pairedP99: number;
  }[];
}

/** Same body both ways: the model server's own name, which the gateway routes like any name it does not pin. */
const body = JSON.stringify({
  model: "bench-model",
  messages: [{ role: "user", content: "What is the weather in Oslo?" }],
  max_tokens: 32,
});

async function call(url: string, key: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-arc-session": "bench" },
    body,
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return performance.now() - started;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function interleaved(server: BenchServer, key: string, calls: number, warmup: number) {
  const direct: number[] = [];
  const gateway: number[] = [];
  const paired: number[] = [];
  for (let i = 0; i < warmup + calls; i++) {
    const gatewayFirst = Math.random() < 0.5;
    const a = gatewayFirst ? await call(server.gatewayUrl, key) : await call(server.directUrl, key);
    const b = gatewayFirst ? await call(server.directUrl, key) : await call(server.gatewayUrl, key);
    if (i < warmup) continue;
    gateway.push(gatewayFirst ? a : b);
    direct.push(gatewayFirst ? b : a);
    paired.push(gatewayFirst ? a - b : b - a);
  }
  return {
    directP50: percentile(direct, 50),
    gatewayP50: percentile(gateway, 50),
    directP99: percentile(direct, 99),
    gatewayP99: percentile(gateway, 99),
    pairedP50: percentile(paired, 50),
    pairedP99: percentile(paired, 99),
  };
}

async function throughput(url: string, key: string, seconds: number, inFlight = 32): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        await call(url, key);
        done++;
      }
    }),
  );
  return done / seconds;
}

function startBenchServer(databaseUrl?: string): Promise<{ child: ChildProcess; server: BenchServer }> {
  const child = spawn(process.execPath, ["--import", "tsx", "bench/gateway-bench-server.ts"], {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ARC_BENCH_DATABASE_URL: databaseUrl ?? "" },
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout?.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) resolve({ child, server: JSON.parse(line) });
    });
    child.once("exit", (code) => reject(new Error(`gateway bench server exited with ${code}: ${out}`)));
  });
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** Overheads and throughput against one store (PGlite in a temp ARC_HOME, or the PostgreSQL server at `databaseUrl`). */
async function measure(options: { calls: number; runs: number; seconds: number; databaseUrl?: string }) {
  const { child, server } = await startBenchServer(options.databaseUrl);
  try {
    const runs: GatewayBench["runs"] = [];
    for (let r = 0; r < options.runs; r++) {
      runs.push({ mode: "upstream", ...(await interleaved(server, server.upstreamKey, options.calls, 200)) });
      runs.push({ mode: "embedded", ...(await interleaved(server, server.embeddedKey, options.calls, 200)) });
    }
    const of = (mode: string) => runs.filter((x) => x.mode === mode);
    const paired = (mode: string, p: "P50" | "P99") => round3(median(of(mode).map((x) => x[`paired${p}`])));
    const tails = (mode: string) => round3(median(of(mode).map((x) => x.gatewayP99 - x.directP99)));
    return {
      upstreamP50: paired("upstream", "P50"),
      upstreamP99: paired("upstream", "P99"),
      upstreamTails: tails("upstream"),
      embeddedP50: paired("embedded", "P50"),
      embeddedP99: paired("embedded", "P99"),
      gatewayRps: Math.round(await throughput(server.gatewayUrl, server.upstreamKey, options.seconds)),
      directRps: Math.round(await throughput(server.directUrl, server.upstreamKey, options.seconds)),
      runs: runs.map((x) => ({
        mode: x.mode,
        directP50: round3(x.directP50),
        gatewayP50: round3(x.gatewayP50),
        directP99: round3(x.directP99),
        gatewayP99: round3(x.gatewayP99),
        pairedP50: round3(x.pairedP50),
        pairedP99: round3(x.pairedP99),
      })),
    };
  } finally {
    child.kill("SIGTERM");
  }
}

function report(label: string, m: Awaited<ReturnType<typeof measure>>, calls: number): void {
  const sign = (x: number) => (x >= 0 ? `+${x}` : `${x}`);
  console.log(
    `gateway overhead, ${label}, vs calling the upstream directly (paired per-call difference, median of ${m.runs.length / 2} interleaved runs of ${calls} pairs): p50 ${sign(m.upstreamP50)} ms, p99 ${sign(m.upstreamP99)} ms   targets p50 < 1 ms, p99 < 5 ms; difference of the p99s ${sign(m.upstreamTails)} ms`,
  );
  console.log(
    `gateway overhead, ${label}, embedded engine in-process vs the engine's own HTTP server (paired): p50 ${sign(m.embeddedP50)} ms, p99 ${sign(m.embeddedP99)} ms`,
  );
  console.log(
    `gateway throughput, ${label}: ${m.gatewayRps} requests/s with 32 in flight, every call recorded as a trace (the model server alone: ${m.directRps} requests/s)`,
  );
}

/**
 * Measures the gateway on the embedded store (the headline figures, as `arc serve` runs by default) and, when
 * ARC_TEST_DATABASE_URL names a PostgreSQL server, on it too; prints the figures, writes bench/results/gateway.json.
 */
export async function runGatewayBench(
  options: { calls?: number; runs?: number; seconds?: number } = {},
): Promise<GatewayBench> {
  const settings = { calls: options.calls ?? 1000, runs: options.runs ?? 3, seconds: options.seconds ?? 5 };
  const pglite = await measure(settings);
  report("PGlite store", pglite, settings.calls);
  const postgres = await withFreshPostgresDatabase("arc_bench_gateway", (databaseUrl) =>
    measure({ ...settings, databaseUrl }),
  );
  if (postgres) report("PostgreSQL store", postgres, settings.calls);
  else console.log("gateway on a PostgreSQL store: not measured (set ARC_TEST_DATABASE_URL to measure it)");
  const figures: GatewayBench = {
    gateway_overhead_p50_ms: pglite.upstreamP50,
    gateway_overhead_p99_ms: pglite.upstreamP99,
    gateway_p99_minus_direct_p99_ms: pglite.upstreamTails,
    gateway_rps: pglite.gatewayRps,
    direct_rps: pglite.directRps,
    gateway_runs: settings.runs,
    embedded_overhead_p50_ms: pglite.embeddedP50,
    embedded_overhead_p99_ms: pglite.embeddedP99,
    postgres: postgres
      ? {
          gateway_overhead_p50_ms: postgres.upstreamP50,
          gateway_overhead_p99_ms: postgres.upstreamP99,
          gateway_p99_minus_direct_p99_ms: postgres.upstreamTails,
          gateway_rps: postgres.gatewayRps,
          embedded_overhead_p50_ms: postgres.embeddedP50,
          embedded_overhead_p99_ms: postgres.embeddedP99,
        }
      : null,
    load_average_1m: round3(loadavg()[0]),
    runs: pglite.runs,
  };
  console.log("wrote", writeBenchResults("gateway", figures));
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await runGatewayBench();
