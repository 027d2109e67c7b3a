export {
  AdaptiveTeachingRewardConfig,
  type AdaptiveTeachingRewardConfigInput,
  adaptiveTeachingReward,
  adaptiveTeachingRewardConfig,
  solutionEfficiency,
  type TeachingComparison,
} from "./adaptive-teaching-reward.ts";
