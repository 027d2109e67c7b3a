export {
  partialCreditReward,
  type RewardFn,
  type RewardInput,
  type RewardPenalties,
  verifierReward,
  withPenalties,
} from "./reward-fn.ts";
