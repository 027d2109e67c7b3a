/**
 * Figures come from raw output only: every file in bench/results/ carries the record `writeBenchResults` writes and
 * figures its bench writes, and every file in bench/gpu/ is a record of the GPU bench (`python -m arc_tools.bench`) as
 * it wrote it, with the command it read, its script's SHA-256 (a committed version of the script, whose module the
 * command runs) and the device torch named.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, it } from "node:test";
import { TORCH_WORKER_DIR, torchPython } from "@arc/engine";
import {
  GPU_BENCH_SCRIPTS,
  GPU_RESULTS_DIR,
  RECORD_KEYS,
  RESULTS_DIR,
  thisMachine,
} from "../bench/results-file.ts";
import { pythonLacks, skipWithout } from "../scripts/required-parts.mjs";

const BENCH_DIR = join(import.meta.dirname, "..", "bench");
const [{ path: GPU_SCRIPT, module: GPU_MODULE }] = GPU_BENCH_SCRIPTS;
const scripts = JSON.parse(readFileSync("package.json", "utf8")).scripts as Record<string, string>;

/** The bench file that writes `bench/results/<name>.json` (the one calling `writeBenchResults("<name>", ...)`). */
function writerOf(name: string): string[] {
  return readdirSync(BENCH_DIR)
    .filter((file) => file.endsWith(".ts"))
    .filter((file) => readFileSync(join(BENCH_DIR, file), "utf8").includes(`writeBenchResults("${name}"`))
    .map((file) => `bench/${file}`);
}

/** A bench file's source with the bench/ modules it imports, where its figures' names are written. */
function sourceWithImports(file: string): string {
  const source = readFileSync(file, "utf8");
  const imported = [...source.matchAll(/from "\.\/([\w.-]+\.ts)"/g)]
    .map((m) => join(BENCH_DIR, m[1]))
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path, "utf8"));
  return [source, ...imported].join("\n");
}

/** What is wrong with a figures file of bench/results/, as test messages; none for a file its bench wrote. */
function resultsFileProblems(path: string): string[] {
  const name = basename(path, ".json");
  const f = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const problems: string[] = [];
  const keys = Object.keys(f);
  if (keys.slice(0, RECORD_KEYS.length).join() !== RECORD_KEYS.join())
    problems.push(`starts with ${keys.slice(0, 4).join(", ")}, not the record's ${RECORD_KEYS.join(", ")}`);
  if (f.bench !== name) problems.push(`bench: expected ${name}, got ${String(f.bench)}`);
  if (typeof f.date !== "string" || Number.isNaN(Date.parse(f.date)))
    problems.push(`date: ${String(f.date)}`);
  const machineKeys = Object.keys((f.machine ?? {}) as object);
  if (machineKeys.join() !== Object.keys(thisMachine()).join())
    problems.push(
      `machine: expected ${Object.keys(thisMachine()).join(", ")}, got ${machineKeys.join(", ")}`,
    );
  const writers = writerOf(name);
  if (writers.length !== 1)
    return [...problems, `written by ${writers.length} bench files: ${writers.join(", ")}`];
  const [writer] = writers;
  const command = String(f.command);
  const npm = /^npm run ([\w:-]+)(?: -- .*)?$/.exec(command);
  const ranBy = npm
    ? /^node --import tsx (\S+)$/.exec(scripts[npm[1]] ?? "")?.[1]
    : /^node --import tsx (\S+)/.exec(command)?.[1];
  const ran = ranBy && existsSync(ranBy) ? readFileSync(ranBy, "utf8") : "";
  if (ranBy !== writer && !ran.includes(`from "./${basename(writer)}"`))
    problems.push(`command ${command} does not run ${writer}`);
  const source = sourceWithImports(writer);
  for (const key of keys.slice(RECORD_KEYS.length)) {
    if (!new RegExp(`\\b${key}\\b`).test(source)) problems.push(`${key}: ${writer} writes no such figure`);
  }
  return problems;
}

/** The top-level keys of the record bench.py writes (its `result = {...}`), in order. */
function gpuRecordKeys(): string[] {
  const source = readFileSync(GPU_SCRIPT, "utf8");
  const body = /\n {4}result = \{\n([\s\S]*?)\n {4}\}\n/.exec(source)?.[1];
  assert.ok(body, `${GPU_SCRIPT} builds its record as result = {...}`);
  return [...body.matchAll(/^ {8}"(\w+)":/gm)].map((m) => m[1]);
}

const sha256 = (bytes: Buffer | string) => createHash("sha256").update(bytes).digest("hex");

/** The commits that wrote a version of the file at `path` (not those that removed it), newest first. */
function commitsWriting(path: string): string[] {
  return execFileSync("git", ["log", "--no-renames", "--diff-filter=ACMRT", "--format=%H", "--", path], {
    encoding: "utf8",
  })
    .split("\n")
    .filter(Boolean);
}

/**
 * The SHA-256 of every committed version of the GPU bench script at each of its paths, and of the one in the working
 * tree, each with the modules that ran that version (`arc_tools.bench` for the file at arc_tools/bench.py).
 */
function gpuScriptHashes(): Map<string, Set<string>> {
  const hashes = new Map<string, Set<string>>();
  const add = (bytes: Buffer, module: string) => {
    const hash = sha256(bytes);
    hashes.set(hash, (hashes.get(hash) ?? new Set()).add(module));
  };
  for (const { path, module } of GPU_BENCH_SCRIPTS)
    for (const commit of commitsWriting(path))
      add(execFileSync("git", ["show", `${commit}:${path}`]), module);
  add(readFileSync(GPU_SCRIPT), GPU_MODULE);
  return hashes;
}

/** What is wrong with a GPU figures file, as test messages; none for a file the GPU bench wrote on a GPU. */
function gpuFileProblems(path: string, hashes = gpuScriptHashes()): string[] {
  const f = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const problems: string[] = [];
  const expected = gpuRecordKeys();
  if (Object.keys(f).join() !== expected.join())
    problems.push(`fields: expected ${expected.join(", ")}, got ${Object.keys(f).join(", ")}`);
  if (f.bench !== "torch-gpu") problems.push(`bench: expected torch-gpu, got ${String(f.bench)}`);
  if (basename(path, ".json") !== f.bench) problems.push(`file name: expected ${String(f.bench)}.json`);
  const ran = /(?:^|[\s/])python[\d.]*'? -m (arc_\w+\.bench)\b/.exec(String(f.command))?.[1];
  const modules = GPU_BENCH_SCRIPTS.map((script) => script.module);
  const versionRanAs = hashes.get(String(f.script_sha256));
  if (!ran || !(modules as readonly string[]).includes(ran))
    problems.push(
      `command: expected the python -m ${modules.join(" | ")} line Python read, got ${String(f.command)}`,
    );
  else if (versionRanAs && !versionRanAs.has(ran))
    problems.push(`command: runs ${ran}, but script_sha256 is a version of ${[...versionRanAs].join(", ")}`);
  if (!versionRanAs)
    problems.push(
      `script_sha256: ${String(f.script_sha256)} is no committed version of ${GPU_BENCH_SCRIPTS.map((script) => script.path).join(" or ")}`,
    );
  const machine = (f.machine ?? {}) as Record<string, unknown>;
  if (Object.keys(machine).join() !== "device,cpus,platform")
    problems.push(`machine: expected device, cpus, platform, got ${Object.keys(machine).join(", ")}`);
  if (typeof f.device !== "string" || f.device === "cpu" || machine.device !== f.device)
    problems.push(`device: expected a GPU as torch names it, in machine.device too, got ${String(f.device)}`);
  return problems;
}

const jsonFiles = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((file) => file.endsWith(".json"))
        .map((file) => join(dir, file))
    : [];

describe("figures files", () => {
  for (const path of jsonFiles(RESULTS_DIR)) {
    it(`bench/results/${basename(path)} is the record its bench wrote, with figures that bench writes`, () => {
      assert.deepEqual(resultsFileProblems(path), []);
    });
  }

  for (const path of jsonFiles(GPU_RESULTS_DIR)) {
    it(`bench/gpu/${basename(path)} is the GPU bench's record of a GPU, as it wrote it`, () => {
      assert.deepEqual(gpuFileProblems(path), []);
    });
  }

  it("finds a figure its bench does not write, and a command that runs another bench", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-results-check-"));
    const path = join(dir, "thread-contention.json");
    const record = {
      bench: "thread-contention",
      command: "npm run bench:contention",
      date: "2026-01-01T00:00:00.000Z",
      machine: thisMachine(),
      generate_slowdown: 1.2,
    };
    writeFileSync(path, JSON.stringify(record));
    assert.deepEqual(resultsFileProblems(path), []);
    writeFileSync(path, JSON.stringify({ ...record, command: "npm run bench:rl", speedup_by_hand: 1.5 }));
    assert.deepEqual(resultsFileProblems(path), [
      "command npm run bench:rl does not run bench/thread-contention.bench.ts",
      "speedup_by_hand: bench/thread-contention.bench.ts writes no such figure",
    ]);
  });

  it("refuses a GPU record that the GPU bench did not write as it stands", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-gpu-check-"));
    const path = join(dir, "torch-gpu.json");
    // the shape of a record assembled by hand: a command and platform written after the fact, no script hash
    writeFileSync(
      path,
      JSON.stringify({
        bench: "torch-gpu",
        command: "cd packages/engine/python && python -m arc_tools.bench --out torch-gpu.json",
        date: "2026-11-26T19:01:00+00:00",
        machine: { device: "NVIDIA H200", cpus: 16, platform: "linux x86_64 (device machine nvidia-h200)" },
        shape: "qwen2-0.5b",
        device: "NVIDIA H200",
        train_tokens_per_s: 59580,
      }),
    );
    const problems = gpuFileProblems(path);
    assert.match(problems.join("\n"), /^fields: expected bench, command, cwd, script_sha256, /m);
    assert.match(problems.join("\n"), /^script_sha256: undefined is no committed version/m);
  });

  it("takes a record whose command runs the module of its script's version, at each path the script has", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-gpu-check-"));
    const path = join(dir, "torch-gpu.json");
    const hashes = gpuScriptHashes();
    for (const { path: script, module } of GPU_BENCH_SCRIPTS) {
      const [commit] = commitsWriting(script);
      // the working tree's version where no commit has one at this path yet
      const version = commit ? execFileSync("git", ["show", `${commit}:${script}`]) : readFileSync(script);
      const hash = sha256(version);
      const ranAs = hashes.get(hash) ?? new Set<string>();
      const record = {
        ...Object.fromEntries(gpuRecordKeys().map((key) => [key, null])),
        bench: "torch-gpu",
        command: `/usr/bin/python3 -m ${module} --out /data/torch-gpu.json`,
        script_sha256: hash,
        machine: { device: "NVIDIA H100 80GB HBM3", cpus: 16, platform: "Linux-6.8.0-x86_64-with-glibc2.35" },
        device: "NVIDIA H100 80GB HBM3",
      };
      writeFileSync(path, JSON.stringify(record));
      assert.deepEqual(gpuFileProblems(path, hashes), [], `a record of ${script}`);
      for (const elsewhere of GPU_BENCH_SCRIPTS.filter((s) => !ranAs.has(s.module))) {
        writeFileSync(
          path,
          JSON.stringify({ ...record, command: `python3 -m ${elsewhere.module} --out x.json` }),
        );
        assert.deepEqual(gpuFileProblems(path, hashes), [
          `command: runs ${elsewhere.module}, but script_sha256 is a version of ${[...ranAs].join(", ")}`,
        ]);
      }
    }
    writeFileSync(path, JSON.stringify({ bench: "torch-gpu", command: "python -m arc_torch.worker" }));
    assert.match(
      gpuFileProblems(path, hashes).join("\n"),
      /^command: expected the python -m arc_tools\.bench \| /m,
    );
  });

  it("takes what python -m arc_tools.bench writes, the device aside, on this machine's CPU", {
    skip: skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers"])),
    timeout: 300_000,
  }, () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-gpu-bench-"));
    const out = join(dir, "torch-gpu.json");
    const small = ["--shape=small", "--device=cpu", "--batch=2", "--length=16", "--steps=1"];
    execFileSync(
      torchPython(),
      ["-m", GPU_MODULE, ...small, "--gen-batch=2", "--new-tokens=4", `--out=${out}`],
      {
        cwd: TORCH_WORKER_DIR,
        stdio: "ignore",
      },
    );
    const written = JSON.parse(readFileSync(out, "utf8"));
    assert.equal(written.cwd, TORCH_WORKER_DIR);
    assert.match(written.command, /-m arc_tools\.bench --shape=small .* --out=/);
    // everything but the device passes: bench.py names a CPU run torch-python, and only GPU records belong here
    assert.deepEqual(gpuFileProblems(out), [
      "bench: expected torch-gpu, got torch-python",
      "file name: expected torch-python.json",
      "device: expected a GPU as torch names it, in machine.device too, got cpu",
    ]);
    writeFileSync(out, JSON.stringify({ ...written, script_sha256: "0".repeat(64) }));
    assert.match(gpuFileProblems(out).join("\n"), /script_sha256: 0{64} is no committed version/);
  });
});
