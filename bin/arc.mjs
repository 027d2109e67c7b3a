#!/usr/bin/env node
// The `arc` command in the repository: runs the CLI from its TypeScript source through tsx, so no build stands
// between a clone and a run. tsx follows tsconfig.json's `paths`, which send each @arc/* import to the package's
// src/; TSX_TSCONFIG_PATH names that tsconfig.json to the CLI's worker threads and child processes too, whatever
// their working directory. (An installed @arc/server runs its compiled dist/ through packages/server/bin/arc.mjs.)
import { fileURLToPath } from "node:url";
import { register } from "tsx/esm/api";

process.env.TSX_TSCONFIG_PATH = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
register();
const { main } = await import("../packages/server/src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
