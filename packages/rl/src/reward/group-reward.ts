import type { GenResult, Task, VerifyResult } from "@arc/core";
import type { RewardFn } from "./reward-fn.ts";

/** One prompt's samples as a reward sees them: the task, each sample, and the verifier's judgement of each. */
export interface RewardGroup {
  task: Task;
  samples: readonly GenResult[];
  verdicts: readonly VerifyResult[];
}

/**
 * Rewards one group of samples, one number each; null when they cannot all be scored now (a judge out of budget or
 * unreachable): the group is then left out of the step rather than trained on a made-up reward.
 */
export type GroupReward = (group: RewardGroup) => Promise<number[] | null>;

/** A per-sample RewardFn as a group reward. */
export function pointwise(reward: RewardFn): GroupReward {
  return async ({ task, samples, verdicts }) =>
    samples.map((sample, k) => reward({ task, sample, verdict: verdicts[k] }));
}
