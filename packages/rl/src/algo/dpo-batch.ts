import type { GenResult, TrainBatch } from "@arc/core";
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
  /** Groups skipped because every sample tied (or, multi-turn, the best and worst episodes never parted). */
  ties: number;
  /** Pairs mixed in from a production PreferenceSet. */
  mixedPairs: number;
  /** Mean reward(chosen) - reward(rejected) over sampled pairs. */
  meanMargin: number;
}

/**
 * The chosen and rejected rows of a multi-turn group's pair: the turn where the two episodes part (the first whose
 * outputs differ), which both took from the same conversation, so the pair shares its prompt. Null when the
 * episodes never part, or part on different prompts (an environment that answered the same turns differently).
 */
function partingTurns(
  chosen: readonly GenResult[],
  rejected: readonly GenResult[],
): [GenResult, GenResult] | null {
  for (let turn = 0; turn < Math.min(chosen.length, rejected.length); turn++) {
    const [a, b] = [chosen[turn], rejected[turn]];
    if (sameTokens(a.outputTokens, b.outputTokens)) continue;
    return sameTokens(a.promptTokens, b.promptTokens) ? [a, b] : null;
  }
  return null;
}

function sameTokens(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((token, i) => token === b[i]);
}

/**
 * (best, worst) pairs of each group, ties skipped, then the mixed-in pairs. A multi-turn group's pair is the turn
 * where its best and worst episodes part (`partingTurns`): the choice that made the difference; a pair that never
 * parts counts as a tie.
 */
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
    const turns = group.episodes
      ? partingTurns(group.episodes[pair.chosen], group.episodes[pair.rejected])
      : [group.samples[pair.chosen], group.samples[pair.rejected]];
    if (!turns) {
      ties++;
      continue;
    }
    const [chosen, rejected] = turns;
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
