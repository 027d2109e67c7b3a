import type { Task } from "@arc/core";
import type { FamilyTeaching } from "./family-teaching.ts";
import type { TeachingRewarder } from "./teaching-rewarder.ts";

/** What telling the strong students of one kind of request their conversions did to the frozen student. */
export interface ConversionKindScore {
  /** The family teaching's `conversionKind` of the requests (`book_table:month`). */
  kind: string;
  /** Tasks of this kind whose greedy probe opens the right call. */
  students: number;
  /** Of them, wrong alone and right when told. */
  fixed: number;
  /** Of them, right alone and wrong when told. */
  broken: number;
  /** Mean adaptive-teaching reward of telling them, over the `students`. */
  meanReward: number;
  /** Standard error of that mean (0 for a single student). */
  rewardStandardError: number;
  /** Mean reward of saying nothing to the same students (0 under both published reward forms). */
  silentMeanReward: number;
}

/**
 * Measures, kind of request by kind, whether the frozen student gains from being told its request's conversions
 * when its probe already opens the right call: every such task is scored by `rewarder` (the recipe's adaptive
 * teaching reward, the student's greedy answers with and without the teaching) for the conversions and for
 * silence. Tasks that need no conversions, or whose probe is weak, are skipped. Sorted by kind.
 */
export async function measureStrongConversions(
  tasks: readonly Task[],
  rewarder: TeachingRewarder,
  teaching: FamilyTeaching,
  concurrency = 32,
): Promise<ConversionKindScore[]> {
  const byKind = new Map<string, { told: number[]; silent: number[]; fixed: number; broken: number }>();
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++];
      const kind = teaching.conversionKind(task);
      if (kind === null) continue;
      const approach = await rewarder.probe(task);
      if (teaching.diagnose(task, approach).diagnosis !== "strong") continue;
      const [told, silent] = await Promise.all([
        rewarder.score(task, teaching.teacherReply(task, approach, "all").reply),
        rewarder.score(task, teaching.teacherReply(task, approach, []).reply),
      ]);
      const seen = byKind.get(kind) ?? { told: [], silent: [], fixed: 0, broken: 0 };
      seen.told.push(told.reward);
      seen.silent.push(silent.reward);
      if (told.taughtScore > told.baselineScore) seen.fixed += 1;
      if (told.taughtScore < told.baselineScore) seen.broken += 1;
      byKind.set(kind, seen);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, tasks.length) }, worker));
  return [...byKind]
    .map(([kind, seen]) => {
      const n = seen.told.length;
      const meanReward = mean(seen.told);
      const variance = n > 1 ? seen.told.reduce((a, r) => a + (r - meanReward) ** 2, 0) / (n - 1) : 0;
      return {
        kind,
        students: n,
        fixed: seen.fixed,
        broken: seen.broken,
        meanReward,
        rewardStandardError: Math.sqrt(variance / n),
        silentMeanReward: mean(seen.silent),
      };
    })
    .sort((a, b) => a.kind.localeCompare(b.kind));
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}

/**
 * The kinds of request worth telling strong students their conversions: those whose mean reward beats silence's by
 * more than `standardErrors` standard errors (default 2), so that a kind measured on a few students, whose gain
 * could be chance, stays silent: a teacher must not degrade.
 */
export function kindsWorthTelling(scores: readonly ConversionKindScore[], standardErrors = 2): string[] {
  return scores
    .filter((s) => s.meanReward - standardErrors * s.rewardStandardError > s.silentMeanReward)
    .map((s) => s.kind);
}
