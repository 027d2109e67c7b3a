export { type GroupReward, pointwise, type RewardGroup } from "./group-reward.ts";
export { DEFAULT_MIN_JUDGE_SCORED_SHARE, judgeCoverageShortfall } from "./judge-coverage.ts";
export { type JudgeRewardOptions, type JudgeUsage, judgeReward } from "./judge-reward.ts";
export {
  partialCreditReward,
  type RewardFn,
  type RewardInput,
  type RewardPenalties,
  verifierReward,
  withPenalties,
} from "./reward-fn.ts";
