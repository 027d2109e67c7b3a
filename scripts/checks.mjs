#!/usr/bin/env node
// The checks `npm test` runs before the tests, as two chains side by side (each uses about one core): Biome, tsc and
// the build (dist/, which the tests' processes run: scripts/test.mjs), and the project's venv (scripts/python-env.mjs)
// then pyright against it. Output shows as it comes; the first failing command stops its chain, and any failure fails
// the checks with that command's status, naming it.
// Usage: node scripts/checks.mjs
import { spawn } from "node:child_process";

const CHAINS = [
  [
    ["npm", ["run", "lint"]],
    ["npm", ["run", "typecheck"]],
    ["npm", ["run", "build"]],
  ],
  [
    [process.execPath, ["scripts/python-env.mjs"]],
    ["npm", ["run", "typecheck:python"]],
  ],
];

/** Runs one command, its output shown; resolves to its exit status. */
function runCommand(command, args) {
  const child = spawn(command, args, { stdio: "inherit" });
  return new Promise((resolve) => {
    child.on("error", (error) => {
      console.error(`checks: ${command}: ${error.message}`);
      resolve(1);
    });
    child.on("close", (code, signal) => resolve(signal ? 1 : (code ?? 1)));
  });
}

/** Runs a chain's commands in turn until one fails; resolves to the failing status, or 0. */
async function runChain(chain) {
  for (const [command, args] of chain) {
    const code = await runCommand(command, args);
    if (code !== 0) {
      console.error(`checks: ${[command, ...args].join(" ")} failed with status ${code}`);
      return code;
    }
  }
  return 0;
}

const codes = await Promise.all(CHAINS.map(runChain));
process.exit(codes.find((code) => code !== 0) ?? 0);
