// npm run bench: the platform backbone's figures — SDK overhead per wrapped call and ingest throughput into PGlite
// and into the PostgreSQL server — printed and written to bench/results/backbone.json; then the gateway's and the
// failure pipeline's, written to bench/results/gateway.json and failures.json.
import { printFailuresBench, runFailuresBench } from "./failures.bench.ts";
import { runGatewayBench } from "./gateway.bench.ts";
import { runIngestBench } from "./ingest-throughput.ts";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";
import { measureSdkOverhead } from "./sdk-overhead.ts";

const round2 = (n: number) => Math.round(n * 1000) / 1000;

async function sdkOverhead() {
  const runs = [];
  for (let i = 0; i < 5; i++) runs.push(await measureSdkOverhead({ calls: 1000, warmup: 100 }));
  const p50 = median(runs.map((r) => r.p50Ms));
  const p99 = median(runs.map((r) => r.p99Ms));
  console.log(
    `SDK overhead per wrapped call (median of ${runs.length} runs of 1000 calls, interleaved with unwrapped):` +
      ` p50 +${round2(p50)} ms, p99 +${round2(p99)} ms (unwrapped p50 ${round2(median(runs.map((r) => r.unwrappedP50Ms)))} ms,` +
      ` p99 ${round2(median(runs.map((r) => r.unwrappedP99Ms)))} ms)   target p99 < 1 ms`,
  );
  return { p50, p99, runs: runs.length };
}

const sdk = await sdkOverhead();
const { pglite, pgliteAlone, postgres } = await runIngestBench();

const figures = {
  sdk_overhead_p50_ms: round2(sdk.p50),
  sdk_overhead_p99_ms: round2(sdk.p99),
  ingest_pglite_steps_per_s: Math.round(pglite.stepsPerSecond),
  ingest_postgres_steps_per_s: postgres ? Math.round(postgres.withDetection.stepsPerSecond) : null,
  ingest_pglite_without_detection_steps_per_s: Math.round(pgliteAlone.stepsPerSecond),
  ingest_postgres_without_detection_steps_per_s: postgres ? Math.round(postgres.alone.stepsPerSecond) : null,
  /** The SDK figures are the median of this many runs of 1,000 calls. */
  sdk_overhead_runs: sdk.runs,
  /** The ingest figures are the median of this many rounds. */
  ingest_rounds: pglite.rounds.length,
};
console.log("wrote", writeBenchResults("backbone", figures), figures);

await runGatewayBench();

printFailuresBench(await runFailuresBench());
