// The parts of a machine that some tests need and the suite can run without: a test that needs a missing part skips
// and says why, unless ARC_REQUIRE names the part (`ARC_REQUIRE=python,postgres,ray,chromium`, as .ci/run sets it);
// then the missing part fails the run, naming it. Every skip for a missing part goes through `skipWithout`.
// Usage: node scripts/required-parts.mjs   (checks each part ARC_REQUIRE names; exits 1 naming those missing)

import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Each part a test may need, and what it is. */
export const PARTS = {
  python:
    "the project's Python (.venv, made by scripts/python-env.mjs, or ARC_PYTHON) with packages/engine/python's requirements",
  ray: "Ray in the project's Python, with its ray command beside it",
  postgres: "a PostgreSQL server at ARC_TEST_DATABASE_URL",
  chromium: "Chromium at ARC_CHROMIUM (default /usr/bin/chromium), for the browser tests",
  cc: "a C compiler (CC, default cc), for the embedded engine's native kernels",
  npm: "npm, for the test that packs and installs the packages",
};

/** The modules the project's Python must import for every Python-backed test (requirements*.txt). */
export const PYTHON_MODULES = [
  "torch",
  "transformers",
  "peft",
  "safetensors",
  "pyarrow",
  "numpy",
  "jinja2",
  "verl",
  "hydra",
];

/** The parts ARC_REQUIRE names; throws on a name that is not a part. */
export function requiredParts(env = process.env) {
  const names = (env.ARC_REQUIRE ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(name in PARTS));
  if (unknown.length > 0)
    throw new Error(
      `ARC_REQUIRE: expected parts among ${Object.keys(PARTS).join(", ")}, got ${unknown.join(", ")}`,
    );
  return new Set(names);
}

/** Thrown where a part ARC_REQUIRE names is missing. */
export class MissingPartError extends Error {
  constructor(part, why) {
    super(`ARC_REQUIRE names ${part} (${PARTS[part]}), but ${why}`);
    this.name = "MissingPartError";
    this.part = part;
  }

  /** Whether `error` is a MissingPartError, from this module's copy or another's. */
  static isInstance(error) {
    return error instanceof Error && error.name === "MissingPartError";
  }
}

/**
 * For node:test's `skip`: false when nothing is missing (`missing` is undefined, false or ""); else the reason,
 * `<part>: <missing>`; throws MissingPartError instead when ARC_REQUIRE names the part.
 */
export function skipWithout(part, missing, env = process.env) {
  if (!(part in PARTS))
    throw new Error(`skipWithout: expected a part among ${Object.keys(PARTS).join(", ")}, got ${part}`);
  if (!missing) return false;
  if (requiredParts(env).has(part)) throw new MissingPartError(part, missing);
  return `${part}: ${missing}`;
}

/** The project's Python: ARC_PYTHON, else the venv that scripts/python-env.mjs makes. */
export function projectPython(env = process.env) {
  return env.ARC_PYTHON ?? join(ROOT, ".venv", "bin", "python");
}

/**
 * Why `python` lacks one of `modules`, or undefined when it has them all. The modules are found, not imported (a
 * probe that imported torch and transformers would cost seconds a test file): one that is installed but fails to
 * import fails the test that uses it, as it should.
 */
export function pythonLacks(python, modules) {
  const find = `import importlib.util as u, sys; print(",".join(m for m in sys.argv[1:] if u.find_spec(m) is None))`;
  const probe = spawnSync(python, ["-c", find, ...modules], { encoding: "utf8" });
  if (probe.error)
    return `no ${python} (node scripts/python-env.mjs makes the project's venv; ARC_PYTHON names another Python)`;
  if (probe.status !== 0)
    return `${python} cannot look for modules: ${probe.stderr.trim().split("\n").pop()}`;
  const missing = probe.stdout.trim();
  return missing ? `${python} has no ${missing.split(",").join(", ")}` : undefined;
}

/** Why the `ray` command beside `python` cannot run, or undefined when it can. */
export function rayLacks(python) {
  const lacks = pythonLacks(python, ["ray"]);
  if (lacks) return lacks;
  const cli = join(dirname(python), "ray");
  return isExecutable(cli) ? undefined : `no ray command at ${cli}`;
}

/** The Chromium the browser tests drive. */
export function chromiumPath(env = process.env) {
  return env.ARC_CHROMIUM ?? "/usr/bin/chromium";
}

/** Why Chromium cannot run, or undefined when it can. */
export function chromiumLacks(env = process.env) {
  const path = chromiumPath(env);
  return isExecutable(path) ? undefined : `${path} is absent or not executable`;
}

/** Why `command --version` does not run, or undefined when it does. */
export function commandLacks(command, env = process.env) {
  const probe = spawnSync(command, ["--version"], { encoding: "utf8", env });
  if (probe.error) return `cannot run ${command} (${probe.error.message})`;
  if (probe.status !== 0) return `${command} --version exited with ${probe.status}`;
  return undefined;
}

/** Why the PostgreSQL test server cannot answer, or undefined when it answers `select 1`. */
export async function postgresLacks(env = process.env) {
  const url = env.ARC_TEST_DATABASE_URL;
  if (!url) return "ARC_TEST_DATABASE_URL is not set: no PostgreSQL server to test against";
  const { default: pg } = await import("pg");
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query("select 1");
    return undefined;
  } catch (error) {
    return `the server at ARC_TEST_DATABASE_URL (${redacted(url)}) does not answer: ${error.message || error.code}`;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Each part ARC_REQUIRE names that is missing here, as `<part>: <why>`. */
export async function missingParts(env = process.env) {
  const python = projectPython(env);
  const checks = {
    python: () => pythonLacks(python, PYTHON_MODULES),
    ray: () => rayLacks(python),
    postgres: () => postgresLacks(env),
    chromium: () => chromiumLacks(env),
    cc: () => commandLacks(env.CC || "cc", env),
    npm: () => commandLacks("npm", env),
  };
  const missing = [];
  for (const part of requiredParts(env)) {
    const why = await checks[part]();
    if (why) missing.push(`${part}: ${why}`);
  }
  return missing;
}

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A connection string without its password. */
function redacted(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "not a URL";
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  let missing;
  try {
    missing = await missingParts();
  } catch (error) {
    console.error(`required parts: ${error.message}`);
    process.exit(1);
  }
  const required = [...requiredParts()];
  if (missing.length > 0) {
    console.error(
      `required parts missing (ARC_REQUIRE=${process.env.ARC_REQUIRE}):\n  ${missing.join("\n  ")}`,
    );
    process.exit(1);
  }
  console.log(
    required.length > 0 ? `required parts present: ${required.join(", ")}` : "ARC_REQUIRE names no part",
  );
}
