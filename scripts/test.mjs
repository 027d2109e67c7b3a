#!/usr/bin/env node
// Runs every `*.test.ts` under packages/ and test/ with Node's test runner (through tsx), two files at a time, then
// the `*.alone.test.ts` files one at a time.
// Usage: node scripts/test.mjs [path-substring ...]  — only test files whose path contains one of the substrings.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

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

const filters = process.argv.slice(2);
const files = [...findTests("packages"), ...findTests("test")]
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${JSON.stringify(filters)}`);
  process.exit(1);
}
/** Runs test files with Node's test runner through tsx, `concurrency` files at a time; resolves to the exit code. */
function run(testFiles, concurrency) {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "--test", `--test-concurrency=${concurrency}`, "--test-reporter=spec", ...testFiles],
    { stdio: "inherit" },
  );
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal ? 1 : (code ?? 1))));
}

// Files named *.alone.test.ts measure latency bounds; they run after the others, one at a time, on a quiet machine.
const alone = files.filter((f) => f.endsWith(".alone.test.ts"));
const together = files.filter((f) => !f.endsWith(".alone.test.ts"));
const codes = [];
if (together.length > 0) codes.push(await run(together, 2));
if (alone.length > 0) codes.push(await run(alone, 1));
process.exit(codes.find((code) => code !== 0) ?? 0);
