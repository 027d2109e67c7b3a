#!/usr/bin/env node
// Creates the project's Python venv (.venv) for the PyTorch engine worker from packages/engine/python/requirements.txt,
// and adds VERL's configuration from requirements-verl.txt without its dependencies (only Arc's check that its VERL
// overrides load uses it), once: it is kept while the requirements and the Python are the same. Without python3 it
// says so and does nothing, unless ARC_REQUIRE names python (scripts/required-parts.mjs): then it fails.
// requirements.txt pins every package, so pip installs without resolving: torch, each half of the rest and VERL's part
// as four pip processes side by side (installing is mostly unpacking and compiling, one core each), then `pip check`
// stands in for the resolver: every package requirements.txt pins must have what it requires.
// Usage: node scripts/python-env.mjs        (npm test runs it first)
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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

/** Exits naming `command` when it failed. */
function failIfFailed(command, args, status, error) {
  if (status === 0) return;
  console.error(`python-env: ${command} ${args.join(" ")} failed (${error?.message ?? `exit ${status}`})`);
  process.exit(1);
}

/** Runs a command with its output shown; resolves once it succeeded, exits naming it when it fails. */
function run(command, args) {
  const child = spawn(command, args, { stdio: "inherit" });
  return new Promise((resolve) => {
    child.on("error", (error) => failIfFailed(command, args, 1, error));
    child.on("close", (code, signal) => {
      failIfFailed(command, args, signal ? 1 : code);
      resolve();
    });
  });
}

console.log(
  `python-env: installing ${requirements} and ${verlRequirements} into ${venv} (${version.stdout.trim()})`,
);
const started = Date.now();
if (!existsSync(join(venv, "bin", "python"))) await run("python3", ["-m", "venv", venv]);
const python = join(venv, "bin", "python");
/** requirements.txt's pins, its comments and blank lines left out. */
const pins = readFileSync(requirements, "utf8")
  .split("\n")
  .filter((line) => /^[A-Za-z0-9]/.test(line));
const torch = pins.find((line) => /^torch==/.test(line));
if (!torch) {
  console.error(`python-env: ${requirements} pins no torch`);
  process.exit(1);
}
const restDir = mkdtempSync(join(tmpdir(), "arc-python-env-"));
const restPins = pins.filter((line) => line !== torch);
/** The pins but torch, dealt alternately into halves: pip compiles each package's files on one core. */
const halves = [0, 1].map((half) => {
  const path = join(restDir, `requirements-without-torch-${half}.txt`);
  writeFileSync(path, restPins.filter((_, i) => i % 2 === half).join("\n"));
  return path;
});
const pip = ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps"];
await Promise.all([
  run(python, [...pip, torch]),
  ...halves.map((half) => run(python, [...pip, "-r", half])),
  run(python, [...pip, "-r", verlRequirements]),
]);
rmSync(restDir, { recursive: true, force: true });
/** A distribution's name as pip compares names. */
const normalized = (name) => name.toLowerCase().replace(/[-_.]+/g, "-");
const pinned = new Set(pins.map((line) => normalized(line.split(/[=[<>;\s]/)[0])));
const check = spawnSync(python, ["-m", "pip", "check", "--disable-pip-version-check"], { encoding: "utf8" });
if (check.error) failIfFailed(python, ["-m", "pip", "check"], 1, check.error);
// what requirements.txt pins must have all it requires; VERL's part and a model wheel come without theirs on purpose
const conflicts = check.stdout.split("\n").filter((line) => pinned.has(normalized(line.split(" ")[0])));
if (conflicts.length > 0) {
  console.error(`python-env: the installed packages do not fit together:\n  ${conflicts.join("\n  ")}`);
  process.exit(1);
}
writeFileSync(stamp, `${digest}\n`);
console.log(`python-env: ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
