#!/usr/bin/env node
// The `arc` command of @arc/server. Installed, it runs the compiled CLI (dist/). In the repository, where src/ lies
// beside dist/ (and `npx arc` links here), it hands over to the repository's bin/arc.mjs, which runs from source.
import { existsSync } from "node:fs";

const repository = new URL("../../../bin/arc.mjs", import.meta.url);
if (existsSync(new URL("../src/cli/main.ts", import.meta.url)) && existsSync(repository)) {
  await import(repository.href);
} else {
  const { main } = await import("../dist/cli/main.js");
  process.exitCode = await main(process.argv.slice(2));
}
