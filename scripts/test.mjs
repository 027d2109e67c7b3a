#!/usr/bin/env node
// Runs every `*.test.ts` under packages/ and test/ with Node's test runner (through tsx), two processes at a time and
// longest first (the files a full run found quick share processes, in batches: scripts/test-order.mjs), then the
// `*.alone.test.ts` files one at a time, and ends with a line naming the slowest files, one with each run's wall time,
// one counting the skipped tests by reason and `tests: N passed, N failed, N skipped` over both runs. First it checks
// the parts ARC_REQUIRE names (scripts/required-parts.mjs) and fails, naming them, where one is missing, then builds
// dist/, which the processes and threads the tests start run (ARC_RUN_COMPILED=1).
// Usage: node scripts/test.mjs [path-substring ...]  — only test files whose path contains one of the substrings.
// ARC_TEST_TIMES=<file> also writes every file's time (its top-level tests, in seconds), slowest first, as JSON: a
// full run's, as `{ file: seconds }`, is scripts/test-times.json, the order the files start in.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { missingParts } from "./required-parts.mjs";
import { fileTimes, skipSummary, slowestFilesLine, totalsLine } from "./skip-summary.mjs";
import { startOrder, startUnits } from "./test-order.mjs";

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

const missing = await missingParts();
if (missing.length > 0) {
  console.error(
    `required parts missing (ARC_REQUIRE=${process.env.ARC_REQUIRE}):\n  ${missing.join("\n  ")}`,
  );
  process.exit(1);
}

// The processes and worker threads the tests start (`arc` commands, PGlite's and the trainer's threads) run the
// compiled dist/, built here from the same sources (tsc -b: only what changed, a no-op after the checks' build): each
// starts in about half the CPU time it takes through tsx. The test files themselves run from source.
const build = spawnSync(process.execPath, [join(import.meta.dirname, "build.mjs")], { stdio: "inherit" });
if (build.status !== 0) {
  console.error("the build (scripts/build.mjs) failed: the tests' processes run the compiled dist/");
  process.exit(build.status ?? 1);
}
process.env.ARC_RUN_COMPILED = "1";

/**
 * V8's budget before a WebAssembly function is optimized, 100 times its default, for the test processes: most open
 * a PGlite database that lives seconds, and optimizing the PostgreSQL functions its start runs hot cost more CPU than
 * it saves there (a process that opens one: 2.4 CPU-s to 1.6). Functions that stay hot are optimized all the same.
 */
const WASM_TIERING_BUDGET = "--wasm-tiering-budget=180000000";

/** A full run's time of each file, in seconds: the files start longest first (scripts/test-order.mjs). */
const recordedTimes = JSON.parse(readFileSync(join(import.meta.dirname, "test-times.json"), "utf8"));
const filters = process.argv.slice(2);
const files = [...findTests("packages"), ...findTests("test")].filter(
  (f) => filters.length === 0 || filters.some((s) => f.includes(s)),
);
if (files.length === 0) {
  console.error(`no test files match ${JSON.stringify(filters)}`);
  process.exit(1);
}
const outcomesDir = mkdtempSync(join(tmpdir(), "arc-test-outcomes-"));
/** Units started so far, in both runs: each unit's outcomes go to a file of its own, named by this count. */
let unitsStarted = 0;
/**
 * Runs one unit (a file, or a batch of quick files through scripts/test-batch.mjs) with Node's test runner through
 * tsx, in a process of its own: the spec reporter's output is printed whole when the unit ends (two units' lines never
 * interleave), each test's outcome (with a skip's reason) goes to `outcomesFile`; resolves to the exit code.
 */
function runUnit(unit, outcomesFile) {
  const reporters = [
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    `--test-reporter=${join(import.meta.dirname, "outcome-reporter.mjs")}`,
    `--test-reporter-destination=${outcomesFile}`,
  ];
  const target =
    unit.length === 1 ? ["--test", unit[0]] : [join(import.meta.dirname, "test-batch.mjs"), ...unit];
  const child = spawn(process.execPath, [WASM_TIERING_BUDGET, "--import", "tsx", ...reporters, ...target], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = [];
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      process.stdout.write(Buffer.concat(output));
      resolve(signal ? 1 : (code ?? 1));
    }),
  );
}

/**
 * Runs `units` `concurrency` at a time, each started in the given order as a lane frees (Node's runner would sort
 * files by path); resolves to the first failing exit code, or 0.
 */
async function run(units, concurrency) {
  const waiting = [...units];
  let failed = 0;
  const lane = async () => {
    for (let unit = waiting.shift(); unit !== undefined; unit = waiting.shift()) {
      const code = await runUnit(unit, join(outcomesDir, `${++unitsStarted}.jsonl`));
      if (code !== 0 && failed === 0) failed = code;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return failed;
}

// Files named *.alone.test.ts measure latency bounds; they run after the others, one at a time, on a quiet machine.
const alone = files.filter((f) => f.endsWith(".alone.test.ts"));
const together = files.filter((f) => !f.endsWith(".alone.test.ts"));
const codes = [];
/** Each run's wall time, for the line that says where the suite's time went. */
const phases = [];
for (const [name, phaseFiles, concurrency] of [
  ["two at a time", together, 2],
  ["one at a time", alone, 1],
]) {
  if (phaseFiles.length === 0) continue;
  const started = performance.now();
  const units =
    concurrency === 1
      ? startOrder(phaseFiles, recordedTimes).map((file) => [file])
      : startUnits(phaseFiles, recordedTimes);
  codes.push(await run(units, concurrency));
  phases.push(
    `${phaseFiles.length} file${phaseFiles.length === 1 ? "" : "s"} ${name} in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}
const outcomes = readdirSync(outcomesDir)
  .flatMap((file) => readFileSync(join(outcomesDir, file), "utf8").split("\n").filter(Boolean))
  .map((line) => JSON.parse(line));
rmSync(outcomesDir, { recursive: true, force: true });
console.log(slowestFilesLine(outcomes));
console.log(`wall time: ${phases.join(", ")}`);
if (process.env.ARC_TEST_TIMES)
  writeFileSync(
    process.env.ARC_TEST_TIMES,
    `${JSON.stringify(Object.fromEntries(fileTimes(outcomes).map(({ file, s }) => [file, s])), null, 2)}\n`,
  );
console.log(skipSummary(outcomes.filter((o) => o.outcome === "skip")));
console.log(totalsLine(outcomes));
process.exit(codes.find((code) => code !== 0) ?? 0);
