import type { RewardFn } from "../../reward/index.ts";

/** A tiny environment's reward for end-to-end tests: the share of output characters that are digits. */
const digitReward: RewardFn = ({ sample }) => {
  const text = sample.text;
  if (text.length === 0) return 0;
  return [...text].filter((c) => c >= "0" && c <= "9").length / text.length;
};

export default digitReward;
