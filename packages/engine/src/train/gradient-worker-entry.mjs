// Entry of a gradient worker thread: registers tsx in this thread (Node 20 workers do not inherit the parent's
// module hooks), then loads the TypeScript worker.
import { register } from "tsx/esm/api";

register();
await import("./gradient-worker.ts");
