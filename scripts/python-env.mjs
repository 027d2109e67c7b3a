#!/usr/bin/env node
// Creates the project's Python venv (.venv) for the PyTorch engine worker from packages/engine/python/requirements.txt,
// and adds VERL's configuration from requirements-verl.txt without its dependencies (only Arc's check that its VERL
// overrides load uses it), once: it is kept while the requirements and the Python are the same. Without python3 it
// says so and does nothing, unless ARC_REQUIRE names python (scripts/required-parts.mjs): then it fails.
// Usage: node scripts/python-env.mjs        (npm test runs it first)
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MissingPartError, requiredParts } from "./required-parts.mjs";

const venv = ".venv";
const requirements = "packages/engine/python/requirements.txt";
const verlRequirements = "packages/engine/python/requirements-verl.txt";
const stamp = join(venv, "arc-requirements.sha256");

const version = spawnSync("python3", ["--version"], { encoding: "utf8" });
if (version.error || version.status !== 0) {
  const why = `no python3 on PATH (${version.error?.message ?? `python3 --version exited with ${version.status}`})`;
  if (requiredParts().has("python")) {
    console.error(`python-env: ${new MissingPartError("python", why).message}`);
    process.exit(1);
  }
  console.log(`python-env: ${why}; the tests that need the project's Python will skip`);
  process.exit(0);
}
const digest = createHash("sha256")
  .update(readFileSync(requirements))
  .update(readFileSync(verlRequirements))
  .update(version.stdout)
  .digest("hex");
if (existsSync(stamp) && readFileSync(stamp, "utf8").trim() === digest) process.exit(0);

/** Runs a command with its output shown; exits with its status when it fails. */
function run(command, args) {
  const result = spawnSync(command, args, { stdio: "inherit" });
  if (result.status !== 0) {
    console.error(
      `python-env: ${command} ${args.join(" ")} failed (${result.error?.message ?? `exit ${result.status}`})`,
    );
    process.exit(1);
  }
}
console.log(
  `python-env: installing ${requirements} and ${verlRequirements} into ${venv} (${version.stdout.trim()})`,
);
const started = Date.now();
if (!existsSync(join(venv, "bin", "python"))) run("python3", ["-m", "venv", venv]);
const pip = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check"];
run(join(venv, "bin", "python"), [...pip, "-r", requirements]);
run(join(venv, "bin", "python"), [...pip, "--no-deps", "-r", verlRequirements]);
writeFileSync(stamp, `${digest}\n`);
console.log(`python-env: ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
