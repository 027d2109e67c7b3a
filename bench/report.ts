// npm run bench:report: docs/benchmarks.md from the figures files in bench/results/ (bench/results-file.ts) and the
// GPU figures files in bench/gpu/ (written by `python -m arc_tools.bench` on a GPU machine), one table of every figure
// with its value, target, the command that measured it, and the machine and date it was measured on.
// The page is a function of those files alone, so test/benchmarks-report.test.ts can check it has not drifted.
// A bench whose file is missing shows its figures as "not measured yet", with the command that measures them.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { DemoRun } from "./demo-run.ts";
import {
  type BenchMachine,
  GPU_RESULTS_DIR,
  type GpuMachine,
  RECORD_KEYS,
  RESULTS_DIR,
} from "./results-file.ts";

/** A figures file as read: the record's fields (when present) and the bench's figures. */
type Figures = Record<string, unknown>;

/** One row of the table: where its value comes from, how it is shown, and what it should reach. */
interface Row {
  /** The figures file (bench/results/<bench>.json). */
  bench: string;
  figure: string;
  /** The value, shown as is; null or undefined when this measurement has none. */
  value: (f: Figures) => string | null | undefined;
  /** How many runs (or rounds, steps...) the value is the median of, and what they are. */
  medianOf?: (f: Figures) => { n: number; of: string } | undefined;
  target?: string;
  /** Why the value can be missing from a measurement (shown instead of it). */
  whenMissing?: string;
}

/** The command that measures each bench's figures, for benches not measured yet. */
export const BENCH_COMMANDS: Record<string, string> = {
  backbone: "npm run bench",
  gateway: "npm run bench:gateway",
  failures: "npm run bench",
  demo: "npm run bench:demo",
  engine: "npm run bench:engine",
  "engine-sizes": "npm run bench:engine",
  rl: "npm run bench:rl",
  "real-model": "npm run bench:real-model",
  teaching: "npm run bench:teaching",
  torch: "npm run bench:torch",
  remote: "npm run bench:remote",
  serving: "npm run bench:serving",
  judges: "npm run bench:judges",
  dashboard: "npm run bench:dashboard",
  "thread-contention": "npm run bench:contention",
  "sdk-overhead": "node --import tsx bench/sdk-overhead.ts",
  "torch-gpu":
    "cd packages/engine/python && python -m arc_tools.bench --out ../../../bench/gpu/torch-gpu.json",
};

const NOT_MEASURED = "not measured yet";

function at(f: Figures, path: string): unknown {
  return path.split(".").reduce<unknown>((x, key) => (x as Record<string, unknown> | null)?.[key], f);
}

function numberAt(f: Figures, path: string): number | undefined {
  const x = at(f, path);
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

/** `x` with `digits` decimals and thousands separators. */
function fmt(x: number, digits = 0): string {
  return x.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A row's value from one number in the figures: `path`, with `digits` decimals and `unit` after it. */
function figure(path: string, digits: number, unit = "", sign = false): Row["value"] {
  return (f) => {
    const x = numberAt(f, path);
    if (x === undefined) return undefined;
    return `${sign && x >= 0 ? "+" : ""}${fmt(x, digits)}${unit}`;
  };
}

/**
 * A paired overhead's p50 / p99 (`<prefix>_p50_ms`, `<prefix>_p99_ms`), each "below the noise" where the bench left
 * it out, with the figure at `beside` that shows the measurement's scale; undefined until `beside` is measured.
 */
function pairedOverhead(prefix: string, beside: string, besideLabel: string): Row["value"] {
  return (f) => {
    const scale = numberAt(f, beside);
    if (scale === undefined) return undefined;
    const shown = (x: number | undefined) => (x === undefined ? "below the noise" : `+${fmt(x, 3)} ms`);
    return `${shown(numberAt(f, `${prefix}_p50_ms`))} / ${shown(numberAt(f, `${prefix}_p99_ms`))} (${besideLabel} ${fmt(scale, 3)} ms)`;
  };
}

function medianOf(path: string, of: string): Row["medianOf"] {
  return (f) => {
    const n =
      numberAt(f, path) ?? (Array.isArray(at(f, path)) ? (at(f, path) as unknown[]).length : undefined);
    return n === undefined ? undefined : { n, of };
  };
}

/** A gateway's p50 / p99 added at concurrency `c`, from its `[{concurrency, p50_ms, p99_ms}]` list in gateway.json. */
function overheadAt(name: string, c: number): Row["value"] {
  return (f) => {
    const list = at(f, name);
    if (!Array.isArray(list)) return undefined;
    const row = list.find((x: { concurrency?: number }) => x.concurrency === c) as
      | {
          p50_ms: { median: number; min: number; max: number };
          p99_ms: { median: number; min: number; max: number };
        }
      | undefined;
    if (!row) return undefined;
    const shown = (s: { median: number; min: number; max: number }) =>
      `+${fmt(s.median, 3)} (${fmt(s.min, 3)}–${fmt(s.max, 3)})`;
    return `${shown(row.p50_ms)} / ${shown(row.p99_ms)} ms`;
  };
}

/** A throughput ratio with the calls per second of the gateway and of the upstream alone. */
function ratioWithRps(f: Figures, path: string, name: string): string | undefined {
  const ratio = numberAt(f, path);
  if (ratio === undefined) return undefined;
  const through = numberAt(f, `rps.${name}`);
  const direct = numberAt(f, "rps.upstream");
  return `${fmt(ratio, 3)}${through === undefined || direct === undefined ? "" : ` (${fmt(through)} against ${fmt(direct)} calls/s)`}`;
}

/** The RL bench's run of one setting (`runs[]` in rl.json). */
interface RlRun {
  setting: string;
  algo: string;
  starts_from: string | null;
  final_failure_rate: number;
  wall_s: number;
}

function rlRuns(f: Figures): RlRun[] {
  return Array.isArray(f.runs) ? (f.runs as RlRun[]) : [];
}

/** A judged failure rate against the base model's: `0.104 (0.47× the base 0.221) after 186 s`. */
function againstBase(f: Figures, run: RlRun | undefined): string | undefined {
  const base = numberAt(f, "base_failure_rate");
  if (!run || base === undefined) return undefined;
  return `${fmt(run.final_failure_rate, 3)} (${fmt(run.final_failure_rate / base, 2)}× the base ${fmt(base, 3)}) after ${fmt(run.wall_s)} s`;
}

function demoRuns(f: Figures): DemoRun[] {
  return Array.isArray(f.runs) ? (f.runs as DemoRun[]) : [];
}

const rate = (x: number | null) => (x === null ? "–" : fmt(x, 3));

/** The demo's runs, one line each, under the table. */
function demoRunLines(f: Figures | undefined): string[] {
  const runs = f ? demoRuns(f) : [];
  if (!f || runs.length === 0) return [];
  return [
    `## The main job on fresh clones`,
    "",
    `\`${String(f.command)}\` on ${describeMachine(f.machine as BenchMachine)}, ${String(f.date).slice(0, 10)}: each run is`,
    "`npm install && npm start` on a fresh clone; the target is the live failure rate halved with no pattern worse.",
    "",
    "| run | commit | live failure rate | target | SFT warm-up | wall | beside it |",
    "|---|---|---|---|---|---|---|",
    ...runs.map((r, i) => {
      const warmup =
        r.warmup_steps === null
          ? "none"
          : `${r.warmup_steps} of ${r.warmup_planned_steps} planned steps${r.warmup_replans ? `, re-planned ${r.warmup_replans === 1 ? "once" : `${r.warmup_replans} times`}` : ""}${r.warmup_seconds_per_step === null ? "" : `, ${fmt(r.warmup_seconds_per_step, 2)} s a step`}`;
      const beside = r.npm_test_alongside
        ? `\`npm test\` of another clone${r.npm_test_exit_code === null || r.npm_test_exit_code === undefined ? "" : ` (exit ${r.npm_test_exit_code})`}`
        : "—";
      return `| ${i + 1} | ${r.commit} | ${rate(r.base_failure_rate)} → ${rate(r.final_failure_rate)} | ${r.target_met ? "met" : "not met"}${r.patterns_worse > 0 ? ` (${r.patterns_worse} pattern(s) worse)` : ""} | ${warmup} | ${fmt(r.wall_s)} s | ${beside} |`;
    }),
    "",
  ];
}

const ROWS: Row[] = [
  // npm run bench:demo: the main job
  {
    bench: "demo",
    figure: "`npm start` on fresh clones: live failure rate halved with no pattern worse",
    value: (f) => {
      const runs = demoRuns(f);
      if (runs.length === 0) return undefined;
      const met = runs.filter((r) => r.target_met).length;
      return `${met} of ${runs.length} runs (each run below)`;
    },
    target: "every run",
  },
  // npm run bench: the backbone
  {
    bench: "backbone",
    figure: "SDK time in its own code per wrapped call, p50 (in process, the compiled SDK)",
    value: figure("sdk_capture_p50_ms", 4, " ms"),
    medianOf: medianOf("sdk_overhead_runs", "runs of 3,000 calls"),
  },
  {
    bench: "backbone",
    figure: "SDK time in its own code per wrapped call, p99 (in process, the compiled SDK)",
    value: figure("sdk_capture_p99_ms", 4, " ms"),
    medianOf: medianOf("sdk_overhead_runs", "runs of 3,000 calls"),
    target: "< 0.05 ms",
  },
  {
    bench: "backbone",
    figure:
      "SDK overhead per wrapped call end to end, p50 / p99 (in process, paired per call; A/A noise p99 beside)",
    value: pairedOverhead("sdk_overhead", "sdk_overhead_noise_p99_ms", "noise p99"),
    medianOf: medianOf("sdk_overhead_runs", "runs of 3,000 pairs"),
  },
  {
    bench: "backbone",
    figure: "SDK heap bytes allocated per wrapped call",
    value: figure("sdk_capture_bytes_per_call", 0, " bytes"),
  },
  {
    bench: "backbone",
    figure:
      "SDK overhead over loopback HTTP, p50 / p99 (paired per call; an unwrapped call's own p99 beside)",
    value: pairedOverhead("sdk_overhead_loopback", "sdk_unwrapped_loopback_p99_ms", "unwrapped p99"),
  },
  {
    bench: "backbone",
    figure: "Ingest into PGlite, detection in the same process (batches of 100 steps)",
    value: figure("ingest_pglite_steps_per_s", 0, " steps/s"),
    medianOf: medianOf("ingest_rounds", "rounds"),
    target: "≥ 8,000 steps/s",
  },
  {
    bench: "backbone",
    figure: "Ingest into PGlite, ingest-only process (`ARC_DETECT_WORKER=0`)",
    value: figure("ingest_pglite_without_detection_steps_per_s", 0, " steps/s"),
    medianOf: medianOf("ingest_rounds", "rounds"),
  },
  {
    bench: "backbone",
    figure: "Ingest into a PostgreSQL server, detection in the same process",
    value: figure("ingest_postgres_steps_per_s", 0, " steps/s"),
    medianOf: medianOf("ingest_rounds", "rounds"),
    target: "≥ 25,000 steps/s",
    whenMissing: "not measured: set `ARC_TEST_DATABASE_URL` to a PostgreSQL server",
  },
  {
    bench: "backbone",
    figure: "Ingest into a PostgreSQL server, ingest-only process",
    value: figure("ingest_postgres_without_detection_steps_per_s", 0, " steps/s"),
    medianOf: medianOf("ingest_rounds", "rounds"),
    whenMissing: "not measured: set `ARC_TEST_DATABASE_URL` to a PostgreSQL server",
  },
  // npm run bench:gateway
  ...[1, 16, 64].map(
    (c): Row => ({
      bench: "gateway",
      figure: `Gateway overhead of \`arc serve\` as installed, c = ${c}: p50 / p99 added per call (20 ms upstream, PGlite store)`,
      value: overheadAt("arc", c),
      medianOf: medianOf("rounds", "rounds"),
    }),
  ),
  {
    bench: "gateway",
    figure: "Gateway throughput with 32 in flight, against the upstream's own (every call recorded)",
    value: (f) => ratioWithRps(f, "throughput_ratio_vs_upstream", "arc"),
    medianOf: medianOf("rounds", "rounds"),
  },
  ...[1, 16, 64].map(
    (c): Row => ({
      bench: "gateway",
      figure: `LiteLLM proxy, same upstream and load, c = ${c}: p50 / p99 added per call`,
      value: overheadAt("litellm", c),
      medianOf: medianOf("rounds", "rounds"),
    }),
  ),
  {
    bench: "gateway",
    figure: "LiteLLM proxy throughput with 32 in flight, against the upstream's own",
    value: (f) => ratioWithRps(f, "litellm_throughput_ratio_vs_upstream", "litellm"),
    medianOf: medianOf("rounds", "rounds"),
  },
  {
    bench: "gateway",
    figure:
      "A bare Node.js pass-through proxy (the floor on the same machine), c = 1: p50 / p99 added; throughput ratio",
    value: (f) => {
      const added = overheadAt("bare_proxy", 1)(f);
      const ratio = numberAt(f, "bare_proxy_throughput_ratio_vs_upstream");
      return added === undefined || added === null || ratio === undefined
        ? undefined
        : `${added}; ${fmt(ratio, 3)}`;
    },
    medianOf: medianOf("rounds", "rounds"),
  },
  {
    bench: "gateway",
    figure:
      "Gateway over the bare Node.js proxy of the same run, PGlite / PostgreSQL store: p50 and p99 added at c = 1 and c = 16, and throughput with 32 in flight, as ratios",
    value: (f) => {
      const ratios = (prefix: string) => {
        const at = (key: string) => numberAt(f, `${prefix}${key}`);
        const [p50, p99, p50c16, p99c16, rps] = [
          "overhead_p50_vs_bare",
          "overhead_p99_vs_bare",
          "overhead_p50_c16_vs_bare",
          "overhead_p99_c16_vs_bare",
          "throughput_vs_bare",
        ].map(at);
        if ([p50, p99, p50c16, p99c16, rps].some((x) => x === undefined)) return undefined;
        return `c = 1 ×${fmt(p50 as number, 2)} / ×${fmt(p99 as number, 2)}, c = 16 ×${fmt(p50c16 as number, 2)} / ×${fmt(p99c16 as number, 2)}, throughput ${fmt(rps as number, 3)}`;
      };
      const pglite = ratios("");
      if (pglite === undefined) return undefined;
      return `${pglite} / ${ratios("postgres.") ?? "–"}`;
    },
    medianOf: medianOf("rounds", "rounds"),
    target: "each ≤ ×1.5; throughput ≥ 0.95",
    whenMissing: "not in this measurement (the ratios to the bare proxy)",
  },
  {
    bench: "gateway",
    figure: "Measurement noise (direct against direct), c = 1: p50 / p99 per pair",
    value: (f) => {
      const p50 = numberAt(f, "noise_aa_c1.p50_ms.median");
      const p99 = numberAt(f, "noise_aa_c1.p99_ms.median");
      return p50 === undefined || p99 === undefined ? undefined : `${fmt(p50, 3)} / ${fmt(p99, 3)} ms`;
    },
    medianOf: medianOf("rounds", "rounds"),
  },
  {
    bench: "gateway",
    figure: "Gateway on a PostgreSQL store, c = 1: p50 / p99 added; throughput ratio",
    value: (f) => {
      const p50 = numberAt(f, "postgres.overhead_p50_ms");
      const p99 = numberAt(f, "postgres.overhead_p99_ms");
      const ratio = numberAt(f, "postgres.throughput_ratio_vs_upstream");
      return p50 === undefined || p99 === undefined || ratio === undefined
        ? undefined
        : `+${fmt(p50, 3)} / +${fmt(p99, 3)} ms; ${fmt(ratio, 3)}`;
    },
    medianOf: medianOf("rounds", "rounds"),
    whenMissing: "not measured: set `ARC_TEST_DATABASE_URL` to a PostgreSQL server",
  },
  // npm run bench: the failure pipeline
  {
    bench: "failures",
    figure: "Detection + clustering throughput (simulated production traffic)",
    value: figure("detect_cluster_traces_per_s", 0, " traces/s"),
    medianOf: medianOf("runs", "runs"),
    target: "≥ 2,000 traces/s",
  },
  {
    bench: "failures",
    figure: "Clustering purity against the injected failure modes",
    value: (f) =>
      numberAt(f, "cluster_purity") === undefined
        ? undefined
        : `${fmt(numberAt(f, "cluster_purity") as number, 3)} (${fmt(numberAt(f, "injected_modes") ?? 0)} modes)`,
    target: "≥ 0.9",
  },
  {
    bench: "failures",
    figure: "Clustering completeness against the injected failure modes",
    value: figure("cluster_completeness", 3),
    target: "≥ 0.9",
  },
  {
    bench: "failures",
    figure: "Ingest to committed verdict through `arc serve`, p50 (default 500 ms quiet period)",
    value: figure("ingest_to_verdict_p50_ms", 0, " ms"),
  },
  {
    bench: "failures",
    figure: "Ingest to committed verdict, p50 with no quiet period (queue, worker, detection, clustering)",
    value: figure("ingest_to_verdict_quiet0_p50_ms", 0, " ms"),
  },
  // npm run bench:engine
  {
    bench: "engine",
    figure: "Embedded engine, demo size (`small`, 0.84M parameters): SFT training, batch 16 × 64 tokens",
    value: figure("train_tokens_per_s", 0, " tokens/s"),
    medianOf: medianOf("train_steps_timed", "steps"),
    target: "≥ 1,000 tokens/s",
  },
  {
    bench: "engine",
    figure: "Embedded engine, demo size: generation at batch 16 with the KV cache",
    value: figure("gen_tokens_per_s_batch16", 0, " tokens/s"),
    medianOf: medianOf("generate_repeats", "runs"),
    target: "≥ 3,000 tokens/s",
  },
  {
    bench: "engine",
    figure: "Embedded engine, demo size: generation at batch 1",
    value: figure("gen_tokens_per_s_batch1", 0, " tokens/s"),
    medianOf: medianOf("generate_repeats", "runs"),
  },
  {
    bench: "engine",
    figure:
      "Embedded engine, demo size: training GFLOP/s over a BLAS sgemm's (NumPy OpenBLAS) on the step's own product shapes, one thread each",
    value: (f) => {
      const ratio = numberAt(f, "train_gflops_vs_blas");
      const blas = numberAt(f, "blas_gflops_training_shapes");
      const engine = numberAt(f, "train_gflops");
      if (ratio === undefined || blas === undefined || engine === undefined) return undefined;
      return `${fmt(100 * ratio)}% (${fmt(engine, 1)} of ${fmt(blas, 1)} GFLOP/s)`;
    },
    whenMissing: "not measured: needs python3 with NumPy",
  },
  {
    bench: "engine",
    figure:
      "Embedded engine's native products alone on the training step's product shapes (hot caches, one thread), beside the BLAS sgemm",
    value: (f) => {
      const native = numberAt(f, "native_product_gflops_training_shapes");
      const blas = numberAt(f, "blas_gflops_training_shapes");
      if (native === undefined) return undefined;
      return `${fmt(native, 1)} GFLOP/s${blas === undefined ? "" : ` (BLAS ${fmt(blas, 1)})`}`;
    },
    whenMissing: "not measured: the native kernels are not in use",
  },
  {
    bench: "engine",
    figure:
      "Embedded engine, demo size: speed-up over the tensorflow.js-only engine, measured in the same run",
    value: (f) => {
      const train = numberAt(f, "speedup_vs_baseline");
      if (train === undefined) return undefined;
      const b16 = numberAt(f, "gen_batch16_speedup_vs_baseline") ?? Number.NaN;
      const b1 = numberAt(f, "gen_batch1_speedup_vs_baseline") ?? Number.NaN;
      return `training ×${fmt(train, 2)}, generation batch 16 ×${fmt(b16, 2)}, batch 1 ×${fmt(b1, 2)} (baseline ${String(at(f, "baseline.commit"))})`;
    },
    medianOf: medianOf("baseline.runs", "baseline runs"),
    target: "training ≥ ×3, generation batch 16 ≥ ×2",
    whenMissing: "not measured: run without `--baseline none`",
  },
  {
    bench: "engine",
    figure: "`toolcall` base model: 64 production tasks answered greedily in one batch",
    value: (f) =>
      numberAt(f, "answer_64_tasks_s") === undefined
        ? undefined
        : `${fmt(numberAt(f, "answer_64_tasks_s") as number, 2)} s (${fmt(numberAt(f, "gen_tokens_per_s_mixed_lengths_batch64") ?? 0)} tokens/s)`,
    medianOf: medianOf("answer_64_tasks_repeats", "runs"),
  },
  {
    bench: "engine",
    figure:
      "`toolcall` base model: 256 production tasks through a running batch of 32 rows (a training run's held-out judgement)",
    value: (f) =>
      numberAt(f, "answer_256_tasks_batch32_s") === undefined
        ? undefined
        : `${fmt(numberAt(f, "answer_256_tasks_batch32_s") as number, 2)} s (${fmt(numberAt(f, "gen_tokens_per_s_continuous_batch32") ?? 0)} tokens/s)`,
    medianOf: medianOf("answer_64_tasks_repeats", "runs"),
  },
  {
    bench: "engine-sizes",
    figure: "Embedded engine, SFT training tokens/s by size: tiny / small / base",
    value: (f) => {
      const values = ["tiny", "small", "base"].map((size) => numberAt(f, `sizes.${size}.train_tokens_per_s`));
      return values.every((x) => x === undefined)
        ? undefined
        : values.map((x) => (x === undefined ? "–" : fmt(x))).join(" / ");
    },
  },
  {
    bench: "engine-sizes",
    figure: "Sampling one token in JS: temperature only / top-p + top-k",
    value: (f) => {
      const plain = numberAt(f, "sample_us_plain");
      const topP = numberAt(f, "sample_us_top_p");
      return plain === undefined || topP === undefined ? undefined : `${fmt(plain, 1)} / ${fmt(topP, 1)} µs`;
    },
  },
  // npm run bench:torch
  {
    bench: "torch",
    figure:
      "PyTorch engine against the embedded one, `toolcall-base` on the CPU, one thread each: SFT training, batch 16 × 64 tokens",
    value: (f) => {
      const torch = numberAt(f, "cpu_train_tokens_per_s_torch");
      const embedded = numberAt(f, "cpu_train_tokens_per_s_embedded");
      return torch === undefined || embedded === undefined
        ? undefined
        : `${fmt(torch)} vs ${fmt(embedded)} tokens/s`;
    },
    medianOf: medianOf("cpu_train_steps_timed", "steps"),
  },
  {
    bench: "torch",
    figure:
      "PyTorch engine against the embedded one, `toolcall-base` on the CPU: generation, batch 16 × 128 new tokens",
    value: (f) => {
      const torch = numberAt(f, "cpu_generate_tokens_per_s_torch");
      const embedded = numberAt(f, "cpu_generate_tokens_per_s_embedded");
      return torch === undefined || embedded === undefined
        ? undefined
        : `${fmt(torch)} vs ${fmt(embedded)} tokens/s`;
    },
    medianOf: medianOf("cpu_generate_runs", "runs"),
  },
  {
    bench: "torch",
    figure:
      "The same recipes from `toolcall-base` on either engine, judged alike on 512 held-out production tasks: SFT (200 steps) → DPO (30) / the shipped GRPO (60 steps, asynchronous, decoupled; mean of 3 seeds) failure rate, embedded vs torch",
    value: (f) => {
      const e = (k: string) => numberAt(f, `outcome.embedded.${k}`);
      const t = (k: string) => numberAt(f, `outcome.torch.${k}`);
      const se = numberAt(f, "outcome.standard_error_sft_dpo");
      if (e("sft_dpo_failure_rate") === undefined || se === undefined) return undefined;
      return `${fmt(e("sft_dpo_failure_rate")!, 3)} vs ${fmt(t("sft_dpo_failure_rate")!, 3)} / ${fmt(e("grpo_failure_rate")!, 3)} vs ${fmt(t("grpo_failure_rate")!, 3)} (one standard error ${fmt(se, 3)})`;
    },
    target: "within one standard error",
    whenMissing: "measured with `--outcome`",
  },
  // npm run bench:remote: rollouts on an inference server over HTTP
  {
    bench: "remote",
    figure:
      "Rollouts on a separate `arc engine serve` over HTTP against rollouts in process, the same short recipes from `toolcall-base`: semi-online DPO / async GRPO (mean of 3 seeds) held-out failure rate on 512 production tasks, in process vs over HTTP",
    value: (f) => {
      const n = (k: string) => numberAt(f, k);
      const se = n("standard_error_grpo");
      if (n("dpo_in_process_failure_rate") === undefined || se === undefined) return undefined;
      return `${fmt(n("dpo_in_process_failure_rate")!, 3)} vs ${fmt(n("dpo_remote_failure_rate")!, 3)} / ${fmt(n("grpo_in_process_failure_rate")!, 3)} vs ${fmt(n("grpo_remote_failure_rate")!, 3)} (one standard error ${fmt(n("standard_error_dpo")!, 3)} / ${fmt(se, 3)})`;
    },
    target: "within one standard error",
  },
  // npm run bench:serving: tenants' adapters on one shared base behind the gateway
  {
    bench: "serving",
    figure:
      "32 tenants' LoRA adapters of `toolcall-base` on one `arc engine serve --enable-lora` behind the gateway, mixed traffic (Zipf over tenants, a third streamed, 8-32 tokens): p50 / p99 latency, requests/s, mean adapter load",
    value: (f) => {
      const n = (k: string) => numberAt(f, k);
      if (n("p50_ms") === undefined) return undefined;
      return `${fmt(n("p50_ms")!, 0)} ms / ${fmt(n("p99_ms")!, 0)} ms, ${fmt(n("requests_per_s")!, 1)} requests/s, ${fmt(n("adapter_load_ms")!, 0)} ms per load; ${String(f.adapters_served)} adapters served, ${String(f.failed_requests)} of ${String(f.requests)} calls failed (${String(f.concurrency)} in flight, ${String(f.max_loras)} adapters held merged)`;
    },
  },
  // npm run bench:real-model: SmolLM2-135M-Instruct, imported from PyPI, on both engines
  {
    bench: "real-model",
    figure:
      "SmolLM2-135M-Instruct (imported Q4_1 GGUF, float32) against transformers: largest log-prob gap over every position of 8 chat-templated sequences (tools in four), embedded / torch",
    value: (f) => {
      const e = numberAt(f, "transformers_logprob_max_abs_diff.embedded");
      const t = numberAt(f, "transformers_logprob_max_abs_diff.torch");
      return e === undefined || t === undefined
        ? undefined
        : `${e.toExponential(1)} / ${t.toExponential(1)} over ${fmt(numberAt(f, "logprob_positions") ?? 0)} positions`;
    },
    target: "< 1e-3",
  },
  {
    bench: "real-model",
    figure:
      "SmolLM2-135M-Instruct against transformers: greedy decoding of 32 prompts (16 new tokens), prompts whose tokens are identical, embedded / torch; chat template ids identical to apply_chat_template's",
    value: (f) => {
      const e = numberAt(f, "greedy_identical_of_32.embedded");
      const t = numberAt(f, "greedy_identical_of_32.torch");
      return e === undefined || t === undefined
        ? undefined
        : `${e} / ${t} of 32; templates ${String(f.templates_identical_of_8)} of 8`;
    },
    target: "32 / 32; 8 of 8",
  },
  {
    bench: "real-model",
    figure:
      "SmolLM2-135M-Instruct on the CPU, one thread each: SFT training, batch 4 × 128 tokens, full fine-tuning / LoRA (rank 8, every projection), embedded vs torch",
    value: (f) => {
      const n = (k: string) => numberAt(f, k);
      const full = [n("cpu_train_tokens_per_s_full.embedded"), n("cpu_train_tokens_per_s_full.torch")];
      const lora = [n("cpu_train_tokens_per_s_lora.embedded"), n("cpu_train_tokens_per_s_lora.torch")];
      return [...full, ...lora].some((x) => x === undefined)
        ? undefined
        : `${fmt(full[0]!, 1)} vs ${fmt(full[1]!, 1)} / ${fmt(lora[0]!, 1)} vs ${fmt(lora[1]!, 1)} tokens/s`;
    },
    medianOf: medianOf("cpu_train_steps_timed", "steps"),
  },
  {
    bench: "real-model",
    figure:
      "SmolLM2-135M-Instruct, the whole model trained on both engines: largest gap between the embedded and the torch engine's SFT losses over the same steps, full fine-tuning / LoRA",
    value: (f) => {
      const full = numberAt(f, "cpu_train_loss_max_abs_diff.full");
      const lora = numberAt(f, "cpu_train_loss_max_abs_diff.lora");
      return full === undefined || lora === undefined
        ? undefined
        : `${full.toExponential(1)} / ${lora.toExponential(1)}`;
    },
    target: "< 1e-3",
  },
  {
    bench: "real-model",
    figure:
      "SmolLM2-135M-Instruct on the CPU, one thread each: generation, batch 16 × 64 new tokens / prefill of a 1,024-token prompt, embedded vs torch",
    value: (f) => {
      const n = (k: string) => numberAt(f, k);
      const gen = [
        n("cpu_generate_tokens_per_s_batch16.embedded"),
        n("cpu_generate_tokens_per_s_batch16.torch"),
      ];
      const pre = [n("prefill_tokens_per_s.embedded"), n("prefill_tokens_per_s.torch")];
      return [...gen, ...pre].some((x) => x === undefined)
        ? undefined
        : `${fmt(gen[0]!, 1)} vs ${fmt(gen[1]!, 1)} / ${fmt(pre[0]!)} vs ${fmt(pre[1]!)} tokens/s`;
    },
  },
  {
    bench: "real-model",
    figure:
      "Prefix caching, SmolLM2-135M-Instruct on the embedded engine: time to first token of a 1,000-token shared prefix + a 30-token suffix, without → with the cache",
    value: (f) => {
      const without = numberAt(f, "prefix_cache.ttft_s_without");
      const withCache = numberAt(f, "prefix_cache.ttft_s_with");
      const speedup = numberAt(f, "prefix_cache_speedup.embedded");
      return without === undefined || withCache === undefined || speedup === undefined
        ? undefined
        : `${fmt(without, 2)} s → ${fmt(withCache, 2)} s (${fmt(speedup, 1)}× lower), outputs ${at(f, "prefix_cache.outputs_identical") ? "identical" : "different"}`;
    },
    medianOf: medianOf("prefix_cache.runs", "runs"),
    target: "≥ 5× lower, identical outputs",
  },
  {
    bench: "real-model",
    figure:
      "Prefix caching, SmolLM2-135M-Instruct on the torch engine: time to first token of a 1,000-token shared prefix + a 30-token suffix, without → with the cache",
    value: (f) => {
      const without = numberAt(f, "prefix_cache_torch.ttft_s_without");
      const withCache = numberAt(f, "prefix_cache_torch.ttft_s_with");
      const speedup = numberAt(f, "prefix_cache_speedup.torch");
      return without === undefined || withCache === undefined || speedup === undefined
        ? undefined
        : `${fmt(without, 2)} s → ${fmt(withCache, 2)} s (${fmt(speedup, 1)}× lower), outputs ${at(f, "prefix_cache_torch.outputs_identical") ? "identical" : "different"}`;
    },
    medianOf: medianOf("prefix_cache_torch.runs", "runs"),
    target: "≥ 5× lower, identical outputs",
  },
  {
    bench: "real-model",
    figure:
      "SmolLM2-135M / Qwen2-0.5B shapes on a GPU, bf16, random weights: LoRA training with Arc's torch engine, and its speed against plain transformers + PEFT",
    value: (f) => {
      const lora = at(f, "gpu_train_tokens_per_s_lora");
      const ratio = at(f, "gpu_train_tokens_per_s_vs_transformers");
      return lora === null || lora === undefined
        ? undefined
        : `${JSON.stringify(lora)}; ${JSON.stringify(ratio)}`;
    },
    whenMissing: "no GPU was lent (null); `python -m arc_tools.gpu_check` is the check",
  },
  // npm run bench:judges: the shipped judge
  {
    bench: "judges",
    figure:
      "The shipped `toolcall-judge` against the toolcall verifier on the base model's answers to held-out production requests: agreement (Cohen's kappa)",
    value: (f) => {
      const agreement = numberAt(f, "judge_agreement");
      const kappa = numberAt(f, "judge_kappa");
      return agreement === undefined
        ? undefined
        : `${fmt(agreement, 3)} (kappa ${kappa === undefined ? "–" : fmt(kappa, 3)}) on ${String(f.held_out_traces)} answers, ${String(f.held_out_failed)} failed`;
    },
    target: "≥ 0.9 (kappa ≥ 0.8)",
  },
  {
    bench: "judges",
    figure:
      'The shipped `toolcall-judge`: precision / recall of its "failed" verdicts against the verifier\'s',
    value: (f) => {
      const precision = numberAt(f, "judge_failed_precision");
      const recall = numberAt(f, "judge_failed_recall");
      return precision === undefined || recall === undefined
        ? undefined
        : `${fmt(precision, 2)} / ${fmt(recall, 2)}`;
    },
  },
  {
    bench: "judges",
    figure:
      "The shipped `toolcall-judge` and its rubric on a family whose tools it never saw (`orderdesk` answers after a lookup, half another action than the desk's policy, labelled by its verifier): agreement (Cohen's kappa), and the trust gate",
    value: (f) => {
      const agreement = numberAt(f, "judge_agreement_unseen_family");
      const kappa = numberAt(f, "judge_kappa_unseen_family");
      const answers = numberAt(f, "unseen_family_answers");
      const unjudged = numberAt(f, "unseen_family_unjudged");
      return agreement === undefined || answers === undefined || unjudged === undefined
        ? undefined
        : `${fmt(agreement, 3)} (kappa ${kappa === undefined ? "–" : fmt(kappa, 3)}) on ${answers - unjudged} judged of ${answers}; gate: ${String(f.unseen_family_gate)}`;
    },
    target: "the gate refuses a kappa under judgeMinKappa (0.6)",
  },
  {
    bench: "judges",
    figure:
      "GRPO rewarded by the shipped judge: the share of the verifier-rewarded run's gain over the base it reaches",
    value: figure("judge_path_gain_ratio", 2),
    target: "≥ 0.5",
    whenMissing:
      "null: the verifier-rewarded run gained nothing over the base, so there is no gain to take a share of",
  },
  {
    bench: "judges",
    figure: "The shipped `toolcall-judge` on `arc engine serve`: judge calls a second, 4 in flight",
    value: figure("judge_calls_per_s", 2, " calls/s"),
  },
  {
    bench: "judges",
    figure:
      "GRPO from `toolcall-base`, the same steps, rewarded by the verifier / by the shipped judge: failure rate on 512 held-out production tasks",
    value: (f) => {
      const v = numberAt(f, "grpo_verifier_reward_failure_rate");
      const j = numberAt(f, "grpo_judge_reward_failure_rate");
      const b = numberAt(f, "base_failure_rate");
      return v === undefined || j === undefined || b === undefined
        ? undefined
        : `${fmt(v, 3)} / ${fmt(j, 3)} (base ${fmt(b, 3)}, ${String(f.grpo_steps)} steps)`;
    },
  },
  // npm run bench:dashboard: the trace list over 1,000,000 traces in PostgreSQL
  {
    bench: "dashboard",
    figure: "`GET /v1/traces` server time over 1,000,000 traces in PostgreSQL: the first page, p95",
    value: figure("first_page_p95_ms", 1, " ms"),
    target: "< 500 ms",
  },
  {
    bench: "dashboard",
    figure:
      "`GET /v1/traces` server time, a text search among failed traces (`q=refund&verdict=failed`), p95",
    value: figure("filtered_search_p95_ms", 1, " ms"),
    target: "< 500 ms",
  },
  // python -m arc_tools.bench on a GPU machine: bench/gpu/torch-gpu.json
  {
    bench: "torch-gpu",
    figure:
      "PyTorch engine on a GPU, Qwen2-0.5B shape, random weights, bf16: SFT training, batch 16 × 1,024 tokens",
    value: (f) => {
      const x = numberAt(f, "train_tokens_per_s");
      return x === undefined ? undefined : `${fmt(x)} tokens/s on ${String(f.device)}`;
    },
    medianOf: medianOf("train_step_seconds", "steps"),
  },
  {
    bench: "torch-gpu",
    figure:
      "PyTorch engine on a GPU, Qwen2-0.5B shape, bf16: generation, batch 64 × 256 new tokens (transformers' `generate` beside it)",
    value: (f) => {
      const x = numberAt(f, "generate_tokens_per_s");
      const hf = numberAt(f, "hf_generate_tokens_per_s");
      return x === undefined || hf === undefined
        ? undefined
        : `${fmt(x)} tokens/s (${fmt(hf)}) on ${String(f.device)}`;
    },
    medianOf: medianOf("generate_repeats", "runs, interleaved"),
  },
  // npm run bench:rl
  {
    bench: "rl",
    figure: "`toolcall` base model: judged production failure rate",
    value: (f) => {
      const base = numberAt(f, "base_failure_rate");
      return base === undefined ? undefined : `${fmt(base, 3)}`;
    },
  },
  {
    bench: "rl",
    figure: "SFT on the reference answers of production prompts: judged failure rate",
    value: (f) =>
      againstBase(
        f,
        rlRuns(f).find((r) => r.setting === "sft on labels"),
      ),
    target: "half the base's within 10 min",
    whenMissing: "not in this measurement (`--sft-steps 0`)",
  },
  {
    bench: "rl",
    figure: "SFT, then semi-online DPO (s = 10) from it: judged failure rate",
    value: (f) =>
      againstBase(
        f,
        rlRuns(f).find((r) => r.starts_from === "sft on labels"),
      ),
    target: "half the base's within 10 min",
    whenMissing: "not in this measurement (`--sft-steps 0` or `--after-sft-steps 0`)",
  },
  {
    bench: "rl",
    figure: "Best RL alone (DPO or GRPO from the base): judged failure rate",
    value: (f) => {
      const alone = rlRuns(f).filter((r) => r.algo !== "sft" && !r.starts_from);
      const best = alone.reduce<RlRun | undefined>(
        (a, b) => (a === undefined || b.final_failure_rate < a.final_failure_rate ? b : a),
        undefined,
      );
      return best ? `${againstBase(f, best)}: ${best.setting}` : undefined;
    },
    target: "half the base's within 10 min",
  },
  {
    bench: "rl",
    figure: "Asynchronous GRPO: wall time to the synchronous run's reward, speed-up",
    value: (f) => {
      const x = numberAt(f, "async_speedup_vs_sync");
      return x === undefined ? undefined : `${fmt(x, 2)}×`;
    },
    medianOf: medianOf("async_speedup_rounds", "rounds"),
    target: "≥ 1.5×",
    whenMissing: "not in this measurement (needs the GRPO settings)",
  },
  {
    bench: "rl",
    figure: "Asynchronous GRPO: the most overlap could give, from the runs' own busy seconds",
    value: (f) => {
      const x = numberAt(f, "async_speedup_ceiling_with_slowdowns");
      return x === undefined ? undefined : `${fmt(x, 2)}×`;
    },
    medianOf: medianOf("async_speedup_rounds", "rounds"),
    whenMissing: "not in this measurement (needs the GRPO settings)",
  },
  {
    bench: "rl",
    figure: "`toolcall` base model: pass@k at temperature 1 (greedy pass beside it)",
    value: (f) => {
      const k = numberAt(f, "base_pass_at_k.samples");
      const passAtK = numberAt(f, "base_pass_at_k.pass_at_k");
      const greedy = numberAt(f, "base_pass_at_k.greedy_pass");
      if (k === undefined || passAtK === undefined || greedy === undefined) return undefined;
      return `pass@${k} ${fmt(passAtK, 3)} (greedy ${fmt(greedy, 3)}) on ${fmt(numberAt(f, "base_pass_at_k.tasks") ?? 0)} tasks`;
    },
    whenMissing: "not in this measurement (`--pass-at-k-tasks 0`)",
  },
  // npm run bench:teaching
  {
    bench: "teaching",
    figure: "Adaptive teaching (`toolcall`): the student alone, accuracy",
    value: figure("student_accuracy", 3),
  },
  {
    bench: "teaching",
    figure: "Adaptive teaching: student with the trained teacher, accuracy",
    value: (f) => {
      const x = numberAt(f, "trained_teacher_accuracy");
      if (x === undefined) return undefined;
      const fixed = numberAt(f, "trained_teacher_fixed");
      const broken = numberAt(f, "trained_teacher_broken");
      const p = numberAt(f, "trained_teacher_sign_test_p");
      return `${fmt(x, 3)}${fixed === undefined || broken === undefined ? "" : ` (${fixed} tasks fixed, ${broken} broken${p === undefined ? "" : `, sign test p = ${fmt(p, 3)}`})`}`;
    },
    target: "above the student alone",
  },
  {
    bench: "teaching",
    figure: "Adaptive teaching: non-degradation rate (NDR) of the trained teacher",
    value: figure("ndr", 3),
    target: "≥ 0.99",
  },
  {
    bench: "teaching",
    figure: "Adaptive teaching: teaching tokens to strong / weak students",
    value: (f) => {
      const strong = numberAt(f, "teaching_tokens_strong");
      const weak = numberAt(f, "teaching_tokens_weak");
      return strong === undefined || weak === undefined ? undefined : `${fmt(strong, 1)} / ${fmt(weak, 1)}`;
    },
    target: "fewer to strong students",
  },
  {
    bench: "teaching",
    figure:
      "Adaptive teaching: the rule that reads the solution (the most a teacher can do for this student), accuracy",
    value: figure("reference_rule_accuracy", 3),
  },
  // npm run bench:contention
  {
    bench: "thread-contention",
    figure: "Two threads on the machine: generation slowed by training beside it",
    value: (f) =>
      numberAt(f, "generate_slowdown") === undefined
        ? undefined
        : `${fmt(numberAt(f, "generate_slowdown") as number, 2)}×`,
  },
  {
    bench: "thread-contention",
    figure: "Two threads on the machine: training slowed by generation beside it",
    value: (f) =>
      numberAt(f, "train_slowdown") === undefined
        ? undefined
        : `${fmt(numberAt(f, "train_slowdown") as number, 2)}×`,
  },
  {
    bench: "thread-contention",
    figure: "The most asynchronous RL can gain over synchronous on the machine",
    value: (f) =>
      numberAt(f, "async_speedup_ceiling") === undefined
        ? undefined
        : `${fmt(numberAt(f, "async_speedup_ceiling") as number, 2)}×`,
  },
  // node --import tsx bench/sdk-overhead.ts
  {
    bench: "sdk-overhead",
    figure: "SDK overhead per wrapped call, p50 / p99, non-streamed / streamed",
    value: (f) => {
      const parts = ["plain", "stream"].map((mode) => {
        const p50 = numberAt(f, `${mode}.p50Ms`);
        const p99 = numberAt(f, `${mode}.p99Ms`);
        return p50 === undefined || p99 === undefined ? undefined : `${fmt(p50, 3)} / ${fmt(p99, 3)} ms`;
      });
      return parts.every((p) => p === undefined) ? undefined : parts.map((p) => p ?? "–").join("; ");
    },
    target: "p99 < 1 ms",
  },
];

/**
 * `4 cores, AMD EPYC 7B13, 15.6 GiB, linux x64, Node v20.20.2, load 1.2` (the 1-minute load average as the figures were
 * written, where the file has it); for a GPU figures file, the device as torch names it,
 * `NVIDIA H100 80GB HBM3, 16 CPUs, Linux-6.8.0-x86_64-with-glibc2.35`.
 */
function describeMachine(m: BenchMachine | GpuMachine): string {
  if ("device" in m) return `${m.device}, ${m.cpus} CPUs, ${m.platform}`;
  const load = typeof m.loadAverage1m === "number" ? `, load ${fmt(m.loadAverage1m, 1)}` : "";
  return `${m.cpus} cores, ${m.model}, ${fmt(m.memoryGiB, 1)} GiB, ${m.os}, Node ${m.node}${load}`;
}

/** A figures file with the record every bench writes now, or why it cannot be used. */
function readFiguresFile(path: string): { figures: Figures } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return { problem: `is not JSON (${(error as Error).message})` };
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
    return { problem: "is not an object" };
  const f = parsed as Figures;
  const machine = f.machine as Partial<BenchMachine> | undefined;
  if (typeof f.command !== "string" || typeof f.date !== "string" || typeof machine?.cpus !== "number") {
    return { problem: "names no command, date or machine; run its bench again" };
  }
  return { figures: f };
}

/** Escapes what would break a table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** The names of the figures files in `dir` (without `.json`), sorted; none when it does not exist. */
function figuresFiles(dir: string): string[] {
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((n) => n.endsWith(".json"))
        .map((n) => n.slice(0, -".json".length))
        .sort()
    : [];
}

/** docs/benchmarks.md for the figures files in `resultsDir` and the GPU figures files in `gpuDir`. */
export function benchmarksReport(resultsDir: string = RESULTS_DIR, gpuDir: string = GPU_RESULTS_DIR): string {
  const files = new Map<string, Figures>();
  const problems: string[] = [];
  for (const [dir, shown] of [
    [resultsDir, "bench/results"],
    [gpuDir, "bench/gpu"],
  ]) {
    for (const name of figuresFiles(dir)) {
      const read = readFiguresFile(join(dir, `${name}.json`));
      if ("figures" in read) files.set(name, read.figures);
      else problems.push(`- \`${shown}/${name}.json\` ${read.problem}.`);
    }
  }

  const lines: string[] = [];
  const push = (row: Row, f: Figures | undefined, command: string) => {
    let value = NOT_MEASURED;
    if (f) {
      const shown = row.value(f);
      const median = row.medianOf?.(f);
      value =
        shown === null || shown === undefined
          ? (row.whenMissing ?? "not in this measurement")
          : median && median.n > 1
            ? `${shown} (median of ${median.n} ${median.of})`
            : shown;
    }
    const machine = f ? describeMachine(f.machine as BenchMachine | GpuMachine) : NOT_MEASURED;
    const date = f ? String(f.date).slice(0, 10) : NOT_MEASURED;
    lines.push(
      `| ${cell(row.figure)} | ${cell(value)} | ${cell(row.target ?? "—")} | \`${cell(command)}\` | ${cell(machine)} | ${date} |`,
    );
  };
  for (const row of ROWS) {
    const f = files.get(row.bench);
    push(row, f, f ? String(f.command) : BENCH_COMMANDS[row.bench]);
  }
  // A figures file no row reads (a new bench): each of its top-level numbers, as the bench wrote it.
  for (const [name, f] of files) {
    if (ROWS.some((r) => r.bench === name)) continue;
    for (const [key, x] of Object.entries(f)) {
      if ((RECORD_KEYS as readonly string[]).includes(key) || typeof x !== "number") continue;
      push({ bench: name, figure: `${name}: \`${key}\``, value: () => String(x) }, f, String(f.command));
    }
  }

  return [
    "# Benchmarks",
    "",
    "<!-- Generated by `npm run bench:report` from bench/results/*.json. Do not edit: run a bench, then the report. -->",
    "",
    "Each figure is the latest measurement of the command beside it, on the machine and date beside it. A bench writes",
    "`bench/results/<name>.json` (figures, command, machine, date) when it finishes, replacing the measurement before",
    "it; `npm run bench:report` rebuilds this page from those files, and `test/benchmarks-report.test.ts` fails when the",
    "page and the files disagree. The machine column ends with its 1-minute load average as the figures were written:",
    "figures taken on a machine busy with other work (a load above its cores) are lower bounds. GPU figures come",
    "from `bench/gpu/torch-gpu.json` as `python -m arc_tools.bench` wrote it on a GPU machine, with the command it read,",
    "its script's SHA-256 and the device; until a GPU run writes that file they are not measured.",
    "",
    ...(files.size === 0
      ? [
          "No figures file is in `bench/results/` yet: run the commands below, then `npm run bench:report`.",
          "",
        ]
      : []),
    "| figure | value | target | command | machine | date |",
    "|---|---|---|---|---|---|",
    ...lines,
    "",
    ...demoRunLines(files.get("demo")),
    ...(problems.length > 0 ? ["Figures files left out:", "", ...problems, ""] : []),
  ].join("\n");
}

/** Where the report is written: docs/benchmarks.md in the repository. */
export const REPORT_PATH = join(dirname(fileURLToPath(import.meta.url)), "..", "docs", "benchmarks.md");

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  writeFileSync(REPORT_PATH, benchmarksReport());
  const measured = existsSync(RESULTS_DIR)
    ? readdirSync(RESULTS_DIR).filter((n) => n.endsWith(".json")).length
    : 0;
  console.log(`wrote docs/benchmarks.md from ${measured} figures file(s) in bench/results/`);
}
