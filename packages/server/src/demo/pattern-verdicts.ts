import { holmBonferroni, proportionChangePValues } from "@arc/core";

/** The level of the pattern verdicts' tests, across all patterns together. */
export const PATTERN_ALPHA = 0.05;

/** The one rule every pattern verdict follows, as the report's legend and the summary state it. */
export const PATTERN_VERDICT_RULE =
  "fixed: the pattern's live incidence (its failures per judged call) fell, and the drop is significant; " +
  "worse: it rose, and the rise is significant; unchanged: otherwise. Significant: a one-sided Fisher's exact " +
  `test, with Holm–Bonferroni across all patterns at α ${PATTERN_ALPHA}.`;

/** One failure pattern: its live incidence (failures of the pattern per judged call) under base and final model. */
export interface DemoPattern {
  id: string;
  label: string;
  baseIncidence: number;
  finalIncidence: number;
  /** By `PATTERN_VERDICT_RULE`. */
  verdict: "fixed" | "worse" | "unchanged";
}

/** One pattern's failures under the base model and under the model in production at the end. */
export interface PatternCounts {
  id: string;
  label: string;
  baseFailures: number;
  finalFailures: number;
}

/**
 * Applies `PATTERN_VERDICT_RULE` to every pattern: `baseCalls` and `finalCalls` are the judged calls each model
 * answered. With one model serving both, the counts are the same and every pattern is unchanged.
 */
export function patternVerdicts(
  patterns: readonly PatternCounts[],
  baseCalls: number,
  finalCalls: number,
): DemoPattern[] {
  const tests = patterns.map((p) =>
    proportionChangePValues(baseCalls, p.baseFailures, finalCalls, p.finalFailures),
  );
  const rose = holmBonferroni(
    tests.map((t) => t.rose),
    PATTERN_ALPHA,
  );
  const fell = holmBonferroni(
    tests.map((t) => t.fell),
    PATTERN_ALPHA,
  );
  return patterns.map((p, i) => ({
    id: p.id,
    label: p.label,
    baseIncidence: baseCalls ? p.baseFailures / baseCalls : 0,
    finalIncidence: finalCalls ? p.finalFailures / finalCalls : 0,
    verdict: rose[i].rejected ? "worse" : fell[i].rejected ? "fixed" : "unchanged",
  }));
}
