// Entry of the PGlite thread. A built package has the compiled worker beside this file and loads it as it is;
// the repository has only the TypeScript source, which this thread loads through tsx (Node 20 workers do not
// inherit the parent's module hooks).
import { existsSync } from "node:fs";

if (existsSync(new URL("./pglite-worker.js", import.meta.url))) {
  await import("./pglite-worker.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./pglite-worker.ts");
}
