import type { TrainBatch } from "@arc/core";
import type { ScoredGroup } from "../rollout/scored-group.ts";
import { type AdvantageNormalization, groupAdvantages } from "./group-advantages.ts";

/** The GRPO batch of one step and its bookkeeping. */
export interface GrpoBatch {
  batch: TrainBatch;
  /** Groups kept (some reward differs within the group). */
  groups: number;
  /** Groups dropped because their advantages are all zero (no signal). */
  uniform: number;
  /** Every kept row's advantage, for the step's log. */
  advantages: number[];
}

/**
 * One row per sample of each informative group (per model turn of a multi-turn episode), with its sample's
 * group-normalized advantage. With
 * `behaviourLogprobs`, the ratio is taken against the logprobs the generator sampled with (PPO under
 * staleness); without, the trainer holds its own forward pass of the current policy constant (exactly on-policy).
 */
export function grpoBatch(
  groups: readonly ScoredGroup[],
  normalization: AdvantageNormalization,
  behaviourLogprobs: boolean,
): GrpoBatch {
  const batch: TrainBatch = { promptTokens: [], outputTokens: [], advantages: [] };
  if (behaviourLogprobs) batch.oldLogprobs = [];
  let kept = 0;
  let uniform = 0;
  for (const group of groups) {
    const advantages = groupAdvantages(group.rewards, normalization);
    if (advantages.every((a) => a === 0)) {
      uniform++;
      continue;
    }
    kept++;
    group.samples.forEach((sample, k) => {
      for (const turn of group.episodes?.[k] ?? [sample]) {
        batch.promptTokens.push(turn.promptTokens);
        batch.outputTokens.push(turn.outputTokens);
        batch.advantages?.push(advantages[k]);
        batch.oldLogprobs?.push(turn.outputLogprobs);
      }
    });
  }
  return { batch, groups: kept, uniform, advantages: batch.advantages ?? [] };
}
