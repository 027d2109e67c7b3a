/** `@arc/rl/embedded`: the parts of @arc/rl that construct embedded engines (they import @arc/engine). */
export { embeddedEngineFactory } from "./embedded-engine-factory.ts";
