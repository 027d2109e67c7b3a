// Failure pipeline benchmark: detection + clustering throughput (traces/s) on simulated production traffic with
// known injected failure modes, clustering purity/completeness against those modes, and per-failure assignment
// latency, and the latency from ingest (POST /v1/traces over HTTP to a real server) to the stored verdict.
// Usage: node --import tsx bench/failures.bench.ts [--traces 5000] [--runs 5]
// Writes bench/results/failures.json. `npm run bench` can call runFailuresBench() instead.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  clusteringScores,
  DetectorRegistry,
  detectAndCluster,
  FailureClusterer,
  failureRecord,
  Trace,
} from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { parseFailurePipelineConfig } from "../packages/server/src/failures/failure-pipeline-config.ts";
import { startServer } from "../packages/server/src/serve/start-server.ts";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";

/** What the benchmark measured (the first four keys are the figures file's contract). */
export interface FailuresBenchResult {
  cluster_purity: number;
  cluster_completeness: number;
  /** Median over runs of traces judged and (if failed) clustered per second, traces already validated. */
  detect_cluster_traces_per_s: number;
  /**
   * Median time from `POST /v1/traces` answering (the trace is stored) to its verdict row being committed, through a
   * real `arc serve` on the embedded PGlite with the default detection settings (the quiet period included).
   */
  ingest_to_verdict_p50_ms: number;
  ingest_to_verdict_p99_ms: number;
  /** The same with `quietMs` 0: what the queue, worker, detection and clustering themselves take. */
  ingest_to_verdict_quiet0_p50_ms: number;
  ingest_to_verdict_quiet0_p99_ms: number;
  /** The quiet period of the default settings, in ms. */
  detect_quiet_ms: number;
  /** Same through detectAndCluster, zod validation of each raw trace included (what an ingest worker pays). */
  parse_detect_cluster_traces_per_s: number;
  /** Median and p99 time to assign one failure to its pattern, in microseconds (last run, warm). */
  assign_p50_us: number;
  assign_p99_us: number;
  traces: number;
  failures: number;
  patterns: number;
  injected_modes: number;
  runs: number;
}

/**
 * Posts simulated production traces to a real server (embedded PGlite, in a temp dir) over HTTP, 4 per request every
 * 50 ms (80 traces/s), and notes for each when its verdict row first exists (a query every 5 ms); returns the
 * latencies from the POST's answer to that moment, in ms.
 */
export async function measureIngestToVerdict(
  options: { quietMs?: number; traces?: number } = {},
): Promise<number[]> {
  const home = mkdtempSync(join(tmpdir(), "arc-bench-verdict-"));
  const server = await startServer(loadServerConfig({}, { home, port: 0 }), {
    failures: options.quietMs === undefined ? {} : { config: { quietMs: options.quietMs } },
  });
  try {
    const key = server.credentials?.tenantKey as string;
    const [{ id: tenantId }] = await server.db.query<{ id: string }>(
      "select id from tenants where name = 'default'",
    );
    const traffic = simulateProductionTraffic({ seed: 99, count: options.traces ?? 400 });
    const acked = new Map<string, number>();
    const latencies: number[] = [];
    let sending = true;
    const poller = (async () => {
      while (sending || acked.size > 0) {
        if (acked.size > 0) {
          const rows = await server.db.query<{ trace_id: string }>(
            "select trace_id from verdicts where tenant_id = $1 and trace_id = any($2::text[])",
            [tenantId, [...acked.keys()]],
          );
          const now = performance.now();
          for (const { trace_id } of rows) {
            latencies.push(now - (acked.get(trace_id) as number));
            acked.delete(trace_id);
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    for (let i = 0; i < traffic.length; i += 4) {
      const batch = traffic.slice(i, i + 4).map((s) => s.trace);
      const res = await fetch(`${server.url}/v1/traces`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ traces: batch }),
      });
      if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
      const at = performance.now();
      for (const t of batch) acked.set(t.id as string, at);
      await new Promise((r) => setTimeout(r, 50));
    }
    sending = false;
    await poller;
    return latencies;
  } finally {
    await server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

/** Runs the benchmark, writes bench/results/failures.json and returns the figures. */
export async function runFailuresBench(
  options: { traces?: number; runs?: number } = {},
): Promise<FailuresBenchResult> {
  const count = options.traces ?? 5000;
  const runs = options.runs ?? 5;
  const traffic = simulateProductionTraffic({ seed: 2026, count, modelVersions: ["base-v1", "base-v2"] });
  const parsed = traffic.map((s) => Trace.parse(s.trace));

  const throughput: number[] = [];
  const withParse: number[] = [];
  const assignUs: number[] = [];
  let scores = clusteringScores([]);
  let failures = 0;
  let patterns = 0;
  for (let run = 0; run < runs; run++) {
    // Detect + cluster on validated traces.
    const registry = new DetectorRegistry();
    const clusterer = new FailureClusterer("bench");
    const pairs: { predicted: string; truth: string }[] = [];
    let start = performance.now();
    for (let i = 0; i < parsed.length; i++) {
      const judgement = await registry.judge(parsed[i], traffic[i].feedback);
      const record = failureRecord(parsed[i], judgement);
      if (!record) continue;
      const t0 = performance.now();
      const { patternId } = clusterer.assign(record);
      if (run === runs - 1) assignUs.push((performance.now() - t0) * 1000);
      pairs.push({ predicted: patternId, truth: traffic[i].injected ?? "(none)" });
    }
    throughput.push(count / ((performance.now() - start) / 1000));
    if (run === 0) {
      scores = clusteringScores(pairs.filter((p) => p.truth !== "(none)"));
      failures = pairs.length;
      patterns = clusterer.patterns().length;
    }

    // The same as a server worker runs it: raw trace in, validated, judged, clustered (detectAndCluster).
    const registry2 = new DetectorRegistry();
    const clusterer2 = new FailureClusterer("bench");
    start = performance.now();
    for (let i = 0; i < traffic.length; i++)
      await detectAndCluster(traffic[i].trace, registry2, clusterer2, traffic[i].feedback);
    withParse.push(count / ((performance.now() - start) / 1000));
  }

  const withDefaults = await measureIngestToVerdict();
  const quiet0 = await measureIngestToVerdict({ quietMs: 0 });
  const result: FailuresBenchResult = {
    cluster_purity: round(scores.purity, 4),
    cluster_completeness: round(scores.completeness, 4),
    detect_cluster_traces_per_s: Math.round(median(throughput)),
    ingest_to_verdict_p50_ms: round(median(withDefaults), 1),
    ingest_to_verdict_p99_ms: round(percentile(withDefaults, 0.99), 1),
    ingest_to_verdict_quiet0_p50_ms: round(median(quiet0), 1),
    ingest_to_verdict_quiet0_p99_ms: round(percentile(quiet0, 0.99), 1),
    detect_quiet_ms: parseFailurePipelineConfig({}).quietMs,
    parse_detect_cluster_traces_per_s: Math.round(median(withParse)),
    assign_p50_us: round(median(assignUs), 2),
    assign_p99_us: round(percentile(assignUs, 0.99), 2),
    traces: count,
    failures,
    patterns,
    injected_modes: scores.groups,
    runs,
  };
  writeBenchResults("failures", result);
  return result;
}

function round(x: number, digits: number): number {
  return Math.round(x * 10 ** digits) / 10 ** digits;
}

/** Prints the figures the way `npm run bench` shows them. */
export function printFailuresBench(r: FailuresBenchResult): void {
  console.log(
    `failures: ${r.traces} simulated production traces, ${r.failures} failures, ${r.injected_modes} injected modes → ${r.patterns} patterns`,
  );
  console.log(
    `  detect+cluster      ${r.detect_cluster_traces_per_s} traces/s (median of ${r.runs} runs; target >= 2000)`,
  );
  console.log(`  parse+detect+cluster ${r.parse_detect_cluster_traces_per_s} traces/s`);
  console.log(`  assign one failure  p50 ${r.assign_p50_us} µs, p99 ${r.assign_p99_us} µs`);
  console.log(`  cluster purity      ${r.cluster_purity} (target >= 0.9)`);
  console.log(`  cluster completeness ${r.cluster_completeness} (target >= 0.9)`);
  console.log(
    `  ingest → verdict     p50 ${r.ingest_to_verdict_p50_ms} ms, p99 ${r.ingest_to_verdict_p99_ms} ms through arc serve (PGlite, default settings: judged after ${r.detect_quiet_ms} ms quiet)`,
  );
  console.log(
    `  ingest → verdict     p50 ${r.ingest_to_verdict_quiet0_p50_ms} ms, p99 ${r.ingest_to_verdict_quiet0_p99_ms} ms with no quiet period (queue + worker + detection + clustering)`,
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : undefined;
  };
  printFailuresBench(await runFailuresBench({ traces: flag("traces"), runs: flag("runs") }));
}
