#!/usr/bin/env node
// Type-checks the PyTorch engine's Python (packages/engine/python: arc_torch, arc_tools, arc_verl) with pyright in
// basic mode, against the project's Python (.venv, made by scripts/python-env.mjs, or ARC_PYTHON), whose packages it
// reads the types of. Without that Python it says so and does nothing, unless ARC_REQUIRE names python: then it
// fails.
// Usage: node scripts/python-types.mjs        (npm test runs it after python-env)
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  MissingPartError,
  PYTHON_MODULES,
  projectPython,
  pythonLacks,
  requiredParts,
} from "./required-parts.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const python = projectPython();
const missing = pythonLacks(python, PYTHON_MODULES);
if (missing) {
  if (requiredParts().has("python")) {
    console.error(`python-types: ${new MissingPartError("python", missing).message}`);
    process.exit(1);
  }
  console.log(`python-types: ${missing}; the Python is not type-checked`);
  process.exit(0);
}
const pyright = join(root, "node_modules", ".bin", "pyright");
const config = join(root, "packages", "engine", "python", "pyrightconfig.json");
const run = spawnSync(pyright, ["-p", config, "--pythonpath", python], { stdio: "inherit" });
process.exit(run.status ?? 1);
