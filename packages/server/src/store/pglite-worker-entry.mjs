// Entry of the PGlite thread. A built package has the compiled worker beside this file and loads it as it is;
// the repository has only the TypeScript source, which this thread loads through tsx (Node 20 workers do not
// inherit the parent's module hooks), or with ARC_RUN_COMPILED=1 (scripts/test.mjs) the package's build in dist/.
import { existsSync } from "node:fs";

if (existsSync(new URL("./pglite-worker.js", import.meta.url))) {
  await import("./pglite-worker.js");
} else if (process.env.ARC_RUN_COMPILED === "1") {
  await import(new URL("../../dist/store/pglite-worker.js", import.meta.url).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./pglite-worker.ts");
}
