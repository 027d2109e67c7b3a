#!/usr/bin/env node
// The `arc` command in the repository: runs the CLI from its TypeScript source through tsx, so no build stands
// between a clone and a run. tsx follows tsconfig.json's `paths`, which send each @arc/* import to the package's
// src/; TSX_TSCONFIG_PATH names that tsconfig.json to the CLI's worker threads and child processes too, whatever
// their working directory. (An installed @arc/server runs its compiled dist/ through packages/server/bin/arc.mjs.)
// With ARC_RUN_COMPILED=1 (scripts/test.mjs sets it after building) it runs the compiled dist/ instead, which starts
// in half the CPU time, unless the command may load a TypeScript module of the user's (a family, a reward module):
// that needs tsx.
import { existsSync, readFileSync, statSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

const TYPESCRIPT = /\.[cm]?tsx?$/;

/**
 * Whether this command may load a TypeScript module: an argument names one (`--family x.ts`, an override
 * `reward.module=x.ts`), ARC_FAMILIES or ARC_DETECTORS_MODULE does, or a recipe it reads (an argument, or the run's own
 * recipe.yaml on `train --resume <id> --runs-dir <dir>`) mentions one.
 */
function mayLoadTypeScript(args, env) {
  const modules = [...(env.ARC_FAMILIES ?? "").split(delimiter), env.ARC_DETECTORS_MODULE ?? ""];
  if ([...args, ...modules].some((value) => TYPESCRIPT.test(value.trim()))) return true;
  const readFiles = args.filter((arg) => /\.(ya?ml|json)$/.test(arg));
  const resume = args.indexOf("--resume");
  const runsDir = args.indexOf("--runs-dir");
  if (resume >= 0 && runsDir >= 0 && args[resume + 1] && args[runsDir + 1])
    readFiles.push(join(args[runsDir + 1], args[resume + 1], "recipe.yaml"));
  return readFiles.some(
    (file) => existsSync(file) && statSync(file).isFile() && /\.[cm]?tsx?\b/.test(readFileSync(file, "utf8")),
  );
}

const args = process.argv.slice(2);
let main;
if (process.env.ARC_RUN_COMPILED === "1" && !mayLoadTypeScript(args, process.env)) {
  ({ main } = await import("../packages/server/dist/cli/main.js"));
} else {
  const { register } = await import("tsx/esm/api");
  process.env.TSX_TSCONFIG_PATH = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
  register();
  ({ main } = await import("../packages/server/src/cli/main.ts"));
}
process.exitCode = await main(args);
