import type { GenResult, Task } from "@arc/core";

/** The k samples of one prompt with their rewards: what DPO pairs and GRPO advantages are made from. */
export interface ScoredGroup {
  task: Task;
  samples: GenResult[];
  /**
   * Multi-turn rollouts: every model turn of each sample's episode, in order (`samples[k]` is the last of
   * `episodes[k]`). GRPO trains every turn with its episode's advantage.
   */
  episodes?: GenResult[][];
  /** One reward per sample, from the run's RewardFn. */
  rewards: number[];
  /** Whether the verifier passed each sample (accuracy, independent of reward shaping). */
  passed: boolean[];
  /** [min, max] weight version over the group's tokens. */
  versionRange: [number, number];
}
