/** `@arc/rl/embedded`: the parts of @arc/rl that construct embedded engines (they import @arc/engine). */
export { AsyncRolloutSource, asyncRolloutSource, type ThreadUsage } from "./async-rollout-source.ts";
export { embeddedEngineFactory } from "./embedded-engine-factory.ts";
