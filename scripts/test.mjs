#!/usr/bin/env node
// Runs every `*.test.ts` under packages/ with Node's test runner (through tsx), two files at a time.
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
const child = spawn(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files],
  { stdio: "inherit" },
);
child.on("exit", (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
