// The figures file every bench writes: bench/results/<name>.json holds one measurement, the latest, with the machine
// it ran on, when, and the exact command, beside the bench's own figures. A new measurement replaces the file.
// `npm run bench:report` turns these files into docs/benchmarks.md (bench/report.ts).
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** The folder the figures files are written to. */
export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "results");

/**
 * The folder of GPU figures files: each written whole by `python -m arc_tools.bench --out` on a GPU machine (which has
 * no Node.js), with the command it read, the SHA-256 of its script and the device as torch names it.
 */
export const GPU_RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), "gpu");

/**
 * The GPU bench script (`GPU_BENCH_SCRIPTS[0]`) and each repository path a committed version of it has, with the
 * module `python -m` runs from that path: a record in bench/gpu/ names in its command the module of the script version
 * whose SHA-256 it carries.
 */
export const GPU_BENCH_SCRIPTS = [
  { path: "packages/engine/python/arc_tools/bench.py", module: "arc_tools.bench" },
  { path: "packages/engine/python/arc_torch/bench.py", module: "arc_torch.bench" },
] as const;

/** What a figure was measured on. */
export interface BenchMachine {
  /** Logical CPUs the OS reports. */
  cpus: number;
  /** The CPU model, as the OS reports it (e.g. `Intel(R) Xeon(R) Processor`). */
  model: string;
  memoryGiB: number;
  /** `process.platform` and `process.arch`, e.g. `linux x64`. */
  os: string;
  node: string;
  /** The 1-minute load average when the figures were written (the bench's own load included). */
  loadAverage1m: number;
}

/** What a GPU figure was measured on, as `python -m arc_tools.bench` writes it. */
export interface GpuMachine {
  /** The device as torch names it (`torch.cuda.get_device_name`). */
  device: string;
  /** Logical CPUs Python reports (`os.cpu_count()`). */
  cpus: number;
  /** Python's `platform.platform()`. */
  platform: string;
}

/** The fields every figures file carries before the bench's own figures. */
export interface BenchRecord {
  /** The file's name without `.json`. */
  bench: string;
  /** The command that measured it, as a user would type it in the repository root. */
  command: string;
  /** When the measurement ended, ISO 8601 (UTC). */
  date: string;
  machine: BenchMachine;
}

/** Names that `BenchRecord` uses, so a bench's figures cannot take them. */
export const RECORD_KEYS = ["bench", "command", "date", "machine"] as const;

/** The machine this process runs on. */
export function thisMachine(): BenchMachine {
  const list = cpus();
  return {
    cpus: list.length,
    model: (list[0]?.model ?? "unknown").trim().replace(/\s+/g, " "),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: `${process.platform} ${process.arch}`,
    node: process.version,
    loadAverage1m: Math.round(loadavg()[0] * 100) / 100,
  };
}

/** The 1, 5 and 15-minute load averages now: on a shared machine a run's figures say how busy it was. */
export function loadAverages(): number[] {
  return loadavg().map((x) => Math.round(x * 100) / 100);
}

/** One shell word, quoted when it needs to be. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command line this process was started with, as a user types it: `npm run <script> -- <args>` when npm ran it
 * (npm names the script in `npm_lifecycle_event`), else `node --import tsx <file> <args>`.
 */
export function invokingCommand(argv = process.argv, env = process.env): string {
  const args = argv.slice(2).map(shellWord);
  const script = env.npm_lifecycle_event;
  if (script?.startsWith("bench"))
    return [`npm run ${script}`, ...(args.length > 0 ? ["--", ...args] : [])].join(" ");
  const file = argv[1] ? relative(process.cwd(), argv[1]) : "bench";
  return ["node --import tsx", shellWord(file), ...args].join(" ");
}

/**
 * Writes bench/results/<name>.json: `{bench, command, date, machine, ...figures}`, replacing the measurement there.
 * `command` defaults to this process's own command line, `dir` to bench/results. Returns the path written.
 */
export function writeBenchResults(
  name: string,
  figures: object,
  options: { command?: string; dir?: string } = {},
): string {
  for (const key of RECORD_KEYS) {
    if (key in figures)
      throw new Error(`bench ${name}: a figure may not be called "${key}" (the record uses it)`);
  }
  const record: BenchRecord = {
    bench: name,
    command: options.command ?? invokingCommand(),
    date: new Date().toISOString(),
    machine: thisMachine(),
  };
  const dir = options.dir ?? RESULTS_DIR;
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.json`);
  writeFileSync(path, `${JSON.stringify({ ...record, ...figures }, null, 2)}\n`);
  return path;
}
