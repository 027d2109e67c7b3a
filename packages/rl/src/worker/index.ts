/** `@arc/rl/embedded`: the parts of @arc/rl that construct engines, embedded or torch (they import @arc/engine). */
export { AsyncRolloutSource, asyncRolloutSource, type ThreadUsage } from "./async-rollout-source.ts";
export { engineFactory } from "./engine-factory.ts";
