#!/usr/bin/env node
// The build (`npm run build`; `npm pack` of a package runs it first): compiles each package's src/*.ts to dist/*.js
// with declarations (`tsc -b tsconfig.build.json`: in dependency order, and only what changed since the last build),
// copies the worker-thread entries (src/**/*-entry.mjs) beside their compiled workers, and removes what a source
// file deleted or moved since the last build left in dist/. Running the workspace from source needs none of it.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const build = spawnSync(process.execPath, [tsc, "-b", join(root, "tsconfig.build.json")], {
  stdio: "inherit",
});
if (build.status !== 0) process.exit(build.status ?? 1);

for (const name of readdirSync(join(root, "packages"))) {
  const src = join(root, "packages", name, "src");
  const dist = join(root, "packages", name, "dist");
  if (!existsSync(src) || !existsSync(dist)) continue;
  for (const file of readdirSync(src, { recursive: true })) {
    if (!file.endsWith("-entry.mjs")) continue;
    mkdirSync(dirname(join(dist, file)), { recursive: true });
    copyFileSync(join(src, file), join(dist, file));
  }
  for (const file of readdirSync(dist, { recursive: true })) {
    const source = file.replace(/\.d\.ts$/, ".ts").replace(/\.js$/, ".ts");
    if (/\.(js|d\.ts|mjs)$/.test(file) && !existsSync(join(src, source))) rmSync(join(dist, file));
  }
}
