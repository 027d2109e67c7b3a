import type { JudgeUsage } from "./judge-reward.ts";

/** The share of a judge-rewarded run's samples its judge must score unless the recipe says otherwise. */
export const DEFAULT_MIN_JUDGE_SCORED_SHARE = 0.5;

/**
 * Why a judge-rewarded run learned from too little: its judge scored under `minShare` of the samples sent to it
 * (none scored always counts, whatever `minShare`). Undefined when the judge scored enough.
 */
export function judgeCoverageShortfall(
  usage: Pick<JudgeUsage, "scored" | "unjudged">,
  minShare: number,
): string | undefined {
  const total = usage.scored + usage.unjudged;
  if (total === 0) return undefined;
  const share = usage.scored / total;
  if (usage.scored > 0 && share >= minShare) return undefined;
  const percent = (x: number) => `${Math.round(x * 1000) / 10}%`;
  const why = `${usage.unjudged} could not be judged: the judge's upstream was down or slow, its budget spent, or its replies unreadable`;
  return usage.scored === 0
    ? `the judge scored none of the run's ${total} samples: the run learned from nothing and registers no candidate (${why})`
    : `the judge scored ${usage.scored} of the run's ${total} samples (${percent(share)}), under the ${percent(minShare)} ` +
        `reward.judge.minScoredShare asks: the run learned from too little and registers no candidate (${why})`;
}
