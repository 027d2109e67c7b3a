#!/usr/bin/env node
// The shipped models/ and recipes/ live at the repository root; the installed `arc` finds them in its own package
// folder. `npm pack` of @arc/server copies them in first (`copy`, its prepack) and removes the copies after
// (`remove`, its postpack), so the working tree never holds a second, possibly stale, set.
import { cpSync, rmSync } from "node:fs";

const action = process.argv[2];
if (action !== "copy" && action !== "remove") {
  console.error("usage: node scripts/server-assets.mjs copy|remove");
  process.exit(2);
}
for (const dir of ["models", "recipes"]) {
  const copy = new URL(`../packages/server/${dir}`, import.meta.url);
  rmSync(copy, { recursive: true, force: true });
  if (action === "copy") cpSync(new URL(`../${dir}`, import.meta.url), copy, { recursive: true });
}
