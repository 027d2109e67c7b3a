import { z } from "zod";
import { toInvalidInputError } from "../../trace/index.ts";
import { TeachingOutcome } from "./teaching-outcome.ts";

/** The learning metrics of a set of teaching interactions; null where the data cannot define a figure. */
export interface TeachingMetrics {
  /** How many outcomes the figures cover. */
  interactions: number;
  /** Mean taught score. */
  taughtAccuracy: number | null;
  /** Mean baseline score over the interactions that have one. */
  baselineAccuracy: number | null;
  /** Mean of (taught - baseline) over the interactions that have a baseline. */
  accuracyGain: number | null;
  /** Non-Degradation Rate: share of interactions with a baseline whose taught score is not below it (target >= 0.99). */
  ndr: number | null;
  /** Interactions whose taught score is below their baseline. */
  degradations: number;
  /** Change in taught score per interaction: least-squares slope of score against position (needs >= 2). */
  learningRate: number | null;
  /** Share of interactions whose taught student completed an answer. */
  completionRate: number | null;
  /** Mean teaching length per interaction, empty teachings included. */
  meanTeachingTokens: number | null;
  /** Teaching Efficiency Score: (accuracyGain x completionRate) / (meanTeachingTokens / 1000); null when no teaching was spent. */
  tes: number | null;
  /** 1 - total taught solution tokens / total baseline solution tokens, over interactions that have both. */
  tokenEfficiency: number | null;
}

const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

function slope(ys: number[]): number | null {
  if (ys.length < 2) return null;
  const xMean = (ys.length - 1) / 2;
  const yMean = mean(ys)!;
  let num = 0;
  let den = 0;
  ys.forEach((y, x) => {
    num += (x - xMean) * (y - yMean);
    den += (x - xMean) ** 2;
  });
  return num / den;
}

/** Validates outcomes, naming the first bad one's index and field. */
export function parseTeachingOutcomes(outcomes: unknown): TeachingOutcome[] {
  const parsed = z.array(TeachingOutcome).safeParse(outcomes);
  if (!parsed.success) throw toInvalidInputError(parsed.error, "outcomes");
  return parsed.data;
}

/** Computes NDR, Learning Rate, TES, completion rate and token efficiency over outcomes in time order. */
export function teachingMetrics(outcomes: readonly TeachingOutcome[]): TeachingMetrics {
  return metricsOf(parseTeachingOutcomes(outcomes));
}

function metricsOf(list: TeachingOutcome[]): TeachingMetrics {
  const paired = list.filter((o) => o.baselineScore !== undefined);
  const degradations = paired.filter((o) => o.taughtScore < o.baselineScore!).length;
  const accuracyGain = mean(paired.map((o) => o.taughtScore - o.baselineScore!));
  const completionRate = mean(list.map((o) => (o.completed ? 1 : 0)));
  const meanTeachingTokens = mean(list.map((o) => o.teachingTokens));
  const tes =
    accuracyGain === null || completionRate === null || !meanTeachingTokens
      ? null
      : (accuracyGain * completionRate) / (meanTeachingTokens / 1000);
  const sized = list.filter((o) => o.taughtTokens !== undefined && o.baselineTokens !== undefined);
  const baselineTotal = sized.reduce((a, o) => a + o.baselineTokens!, 0);
  const taughtTotal = sized.reduce((a, o) => a + o.taughtTokens!, 0);
  return {
    interactions: list.length,
    taughtAccuracy: mean(list.map((o) => o.taughtScore)),
    baselineAccuracy: mean(paired.map((o) => o.baselineScore!)),
    accuracyGain,
    ndr: paired.length === 0 ? null : (paired.length - degradations) / paired.length,
    degradations,
    learningRate: slope(list.map((o) => o.taughtScore)),
    completionRate,
    meanTeachingTokens,
    tes,
    tokenEfficiency: baselineTotal === 0 ? null : 1 - taughtTotal / baselineTotal,
  };
}

/** The group name of outcomes that lack the grouping field. */
export const UNGROUPED = "(none)";

/** What to group outcomes by: a field of the outcome, or any function of it. */
export type OutcomeGrouping =
  | "tenantId"
  | "patternId"
  | "judgement"
  | ((outcome: TeachingOutcome) => string | undefined);

/** Metrics per group (per tenant, per pattern, per probe judgement...), groups in order of first appearance. */
export function teachingMetricsBy(
  outcomes: readonly TeachingOutcome[],
  by: OutcomeGrouping,
): Map<string, TeachingMetrics> {
  const keyOf = typeof by === "function" ? by : (o: TeachingOutcome) => o[by];
  const groups = new Map<string, TeachingOutcome[]>();
  for (const outcome of parseTeachingOutcomes(outcomes)) {
    const key = keyOf(outcome) ?? UNGROUPED;
    const group = groups.get(key);
    if (group) group.push(outcome);
    else groups.set(key, [outcome]);
  }
  return new Map([...groups].map(([key, group]) => [key, metricsOf(group)]));
}
