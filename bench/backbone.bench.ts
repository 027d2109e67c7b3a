// npm run bench: the platform backbone's figures — the SDK's cost per wrapped call (in process on the compiled SDK:
// the time in its own code and paired per-call differences beside their A/A noise; and over loopback HTTP) and ingest
// throughput into PGlite and into the PostgreSQL server — printed and written to bench/results/backbone.json; then the
// failure pipeline's, written to bench/results/failures.json. The gateway's figures are npm run bench:gateway's.
import { spawnSync } from "node:child_process";
import { printFailuresBench, runFailuresBench } from "./failures.bench.ts";
import { runIngestBench } from "./ingest-throughput.ts";
import { median } from "./median.ts";
import { loadAverages, writeBenchResults } from "./results-file.ts";
import { measureSdkOverhead } from "./sdk-overhead.ts";

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

/** A paired overhead as written: a negative one is a measurement error (the noise exceeds it), said and not written. */
function overheadFigure(label: string, ms: number): number | null {
  if (ms >= 0) return round3(ms);
  console.log(
    `  ${label}: measured ${round3(ms)} ms, a measurement error (the noise is larger than the overhead); written as null`,
  );
  return null;
}

/** What one run of bench/sdk-capture-cost.mjs measured. */
interface SdkCaptureCost {
  captureP50Ms: number;
  captureP99Ms: number;
  pairedP50Ms: number;
  pairedP99Ms: number;
  noiseP50Ms: number;
  noiseP99Ms: number;
  bytesPerCall: number;
  tracesSent: number;
}

/** One run of bench/sdk-capture-cost.mjs (the compiled SDK on plain Node) over `pairs` paired calls. */
function measureSdkCaptureCost(pairs: number): SdkCaptureCost {
  const run = spawnSync(process.execPath, ["bench/sdk-capture-cost.mjs", String(pairs)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (run.status !== 0) throw new Error(`bench/sdk-capture-cost.mjs exited with ${run.status}`);
  return JSON.parse(run.stdout) as SdkCaptureCost;
}

async function sdkOverhead() {
  const built = spawnSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
  if (built.status !== 0) throw new Error(`npm run build failed (exit ${built.status})`);
  const capture: SdkCaptureCost[] = [];
  for (let i = 0; i < 5; i++) capture.push(measureSdkCaptureCost(3000));
  const loopback = [];
  for (let i = 0; i < 5; i++) loopback.push(await measureSdkOverhead({ calls: 1000, warmup: 100 }));
  const at = <T>(runs: T[], f: (r: T) => number) => median(runs.map(f));
  const figures = {
    sdk_overhead_p50_ms: overheadFigure(
      "SDK overhead p50",
      at(capture, (r) => r.pairedP50Ms),
    ),
    sdk_overhead_p99_ms: overheadFigure(
      "SDK overhead p99",
      at(capture, (r) => r.pairedP99Ms),
    ),
    sdk_overhead_noise_p99_ms: round3(at(capture, (r) => r.noiseP99Ms)),
    sdk_capture_p50_ms: round4(at(capture, (r) => r.captureP50Ms)),
    sdk_capture_p99_ms: round4(at(capture, (r) => r.captureP99Ms)),
    sdk_capture_bytes_per_call: Math.round(at(capture, (r) => r.bytesPerCall)),
    sdk_overhead_loopback_p50_ms: overheadFigure(
      "SDK overhead over loopback, p50",
      at(loopback, (r) => r.pairedP50Ms),
    ),
    sdk_overhead_loopback_p99_ms: overheadFigure(
      "SDK overhead over loopback, p99",
      at(loopback, (r) => r.pairedP99Ms),
    ),
    sdk_unwrapped_loopback_p99_ms: round3(at(loopback, (r) => r.unwrappedP99Ms)),
  };
  console.log(
    `SDK cost per wrapped call, in process on the compiled SDK (median of ${capture.length} runs of 3,000 paired calls over an in-memory provider):`,
  );
  console.log(
    `  time in its own code: p50 ${figures.sdk_capture_p50_ms} ms, p99 ${figures.sdk_capture_p99_ms} ms, ${figures.sdk_capture_bytes_per_call} bytes allocated   target p99 < 0.05 ms`,
  );
  console.log(
    `  paired, end to end: p50 +${figures.sdk_overhead_p50_ms} ms, p99 +${figures.sdk_overhead_p99_ms} ms, beside an A/A noise p99 of ${figures.sdk_overhead_noise_p99_ms} ms`,
  );
  console.log(
    `SDK overhead over loopback HTTP (median of ${loopback.length} runs of 1,000 pairs): p50 ${figures.sdk_overhead_loopback_p50_ms} ms, p99 ${figures.sdk_overhead_loopback_p99_ms} ms, against an unwrapped call's own p99 of ${figures.sdk_unwrapped_loopback_p99_ms} ms`,
  );
  return { figures, runs: capture.length };
}

const loadAverageStart = loadAverages();
const sdk = await sdkOverhead();
const { pglite, pgliteAlone, postgres } = await runIngestBench();

const figures = {
  ...sdk.figures,
  ingest_pglite_steps_per_s: Math.round(pglite.stepsPerSecond),
  ingest_postgres_steps_per_s: postgres ? Math.round(postgres.withDetection.stepsPerSecond) : null,
  ingest_pglite_without_detection_steps_per_s: Math.round(pgliteAlone.stepsPerSecond),
  ingest_postgres_without_detection_steps_per_s: postgres ? Math.round(postgres.alone.stepsPerSecond) : null,
  /** The SDK figures are the median of this many runs (3,000 pairs in process, 1,000 over loopback). */
  sdk_overhead_runs: sdk.runs,
  /** The ingest figures are the median of this many rounds. */
  ingest_rounds: pglite.rounds.length,
  load_average_start: loadAverageStart,
  load_average_end: loadAverages(),
};
console.log("wrote", writeBenchResults("backbone", figures), figures);

printFailuresBench(await runFailuresBench());
