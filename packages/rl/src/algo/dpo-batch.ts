import type { TrainBatch } from "@arc/core";
import type { ScoredGroup } from "../rollout/scored-group.ts";
import { bestWorstPair } from "./preference-pairs.ts";

/** A preference pair already in tokens (e.g. a production PreferenceSet row rendered by the chat template). */
export interface TokenPair {
  promptTokens: number[];
  chosenTokens: number[];
  rejectedTokens: number[];
}

/** The DPO batch of one step and its bookkeeping. */
export interface DpoBatch {
  /** Rows 2i (chosen) and 2i+1 (rejected), as the TrainEngine's DPO objective expects. */
  batch: TrainBatch;
  /** Pairs formed from sampled groups. */
  sampledPairs: number;
  /** Groups skipped because every sample tied. */
  ties: number;
  /** Pairs mixed in from a production PreferenceSet. */
  mixedPairs: number;
  /** Mean reward(chosen) - reward(rejected) over sampled pairs. */
  meanMargin: number;
}

/** (best, worst) pairs of each group, ties skipped, then the mixed-in pairs. */
export function dpoBatch(groups: readonly ScoredGroup[], mixed: readonly TokenPair[] = []): DpoBatch {
  const promptTokens: number[][] = [];
  const outputTokens: number[][] = [];
  let ties = 0;
  let margin = 0;
  let sampled = 0;
  for (const group of groups) {
    const pair = bestWorstPair(group.rewards);
    if (!pair) {
      ties++;
      continue;
    }
    const chosen = group.samples[pair.chosen];
    const rejected = group.samples[pair.rejected];
    promptTokens.push(chosen.promptTokens, rejected.promptTokens);
    outputTokens.push(chosen.outputTokens, rejected.outputTokens);
    margin += pair.margin;
    sampled++;
  }
  for (const pair of mixed) {
    promptTokens.push(pair.promptTokens, pair.promptTokens);
    outputTokens.push(pair.chosenTokens, pair.rejectedTokens);
  }
  return {
    batch: { promptTokens, outputTokens },
    sampledPairs: sampled,
    ties,
    mixedPairs: mixed.length,
    meanMargin: sampled > 0 ? margin / sampled : 0,
  };
}
