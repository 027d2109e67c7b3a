// Failure pipeline benchmark: detection + clustering throughput (traces/s) on simulated production traffic with
// known injected failure modes, clustering purity/completeness against those modes, and per-failure assignment
// latency. Usage: node --import tsx bench/failures.bench.ts [--traces 5000] [--runs 5]
// Writes bench/results/failures.json. `npm run bench` can call runFailuresBench() instead.
import { mkdir, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import {
  clusteringScores,
  DetectorRegistry,
  detectAndCluster,
  FailureClusterer,
  failureRecord,
  simulateProductionTraffic,
  Trace,
} from "@arc/core";

/** What the benchmark measured (the first four keys are the figures file's contract). */
export interface FailuresBenchResult {
  cluster_purity: number;
  cluster_completeness: number;
  /** Median over runs of traces judged and (if failed) clustered per second, traces already validated. */
  detect_cluster_traces_per_s: number;
  /** Measured by the server benchmark (worker on ingest); null here. */
  ingest_to_verdict_p50_ms: null;
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
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
      const judgement = registry.judge(parsed[i], traffic[i].feedback);
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
      detectAndCluster(traffic[i].trace, registry2, clusterer2, traffic[i].feedback);
    withParse.push(count / ((performance.now() - start) / 1000));
  }

  const result: FailuresBenchResult = {
    cluster_purity: round(scores.purity, 4),
    cluster_completeness: round(scores.completeness, 4),
    detect_cluster_traces_per_s: Math.round(median(throughput)),
    ingest_to_verdict_p50_ms: null,
    parse_detect_cluster_traces_per_s: Math.round(median(withParse)),
    assign_p50_us: round(median(assignUs), 2),
    assign_p99_us: round(percentile(assignUs, 0.99), 2),
    traces: count,
    failures,
    patterns,
    injected_modes: scores.groups,
    runs,
  };
  await mkdir(new URL("./results/", import.meta.url), { recursive: true });
  await writeFile(
    new URL("./results/failures.json", import.meta.url),
    `${JSON.stringify(result, null, 2)}\n`,
  );
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
    "  ingest_to_verdict_p50_ms = null: it needs the server's ingest API and detection worker; the server benchmark measures it",
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
