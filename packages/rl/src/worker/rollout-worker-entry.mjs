// Entry of the rollout worker thread. A built package has the compiled worker beside this file and loads it as it is;
// the repository has only the TypeScript source, which this thread loads through tsx (Node 20 workers do not
// inherit the parent's module hooks).
import { existsSync } from "node:fs";

if (existsSync(new URL("./rollout-worker.js", import.meta.url))) {
  await import("./rollout-worker.js");
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import("./rollout-worker.ts");
}
