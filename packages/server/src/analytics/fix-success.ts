import type { Queryable } from "../store/database.ts";
import {
  patternFailuresBetween,
  patternHeads,
  promotionsBetween,
  tracesBetween,
  type Window,
} from "./analytics-store.ts";
import { proportionFall, proportionFallTestName } from "./two-proportion-test.ts";

/** Failures a pattern must be expected to have on each side of a promotion (under "no change") to be tested. */
export const MIN_EXPECTED_FAILURES = 5;
/** The significance level of "the pattern's failure rate fell". */
export const FIX_ALPHA = 0.05;

/** One pattern before and after one promotion. */
export interface PatternFixCheck {
  patternId: string;
  label: string;
  deploymentId: string;
  promotedAt: string;
  before: { failures: number; traces: number; rate: number | null };
  after: { failures: number; traces: number; rate: number | null };
  /** null when untested. */
  z: number | null;
  pValue: number | null;
  fixed: boolean;
  /** Why it was not tested (too little traffic), when it was not. */
  untested?: string;
}

/** The share of patterns whose failure rate fell significantly after a promotion, and each pattern's test. */
export interface FixSuccess {
  test: string;
  /** Patterns with at least one tested promotion. */
  tested: number;
  /** Of those, patterns whose failure rate fell significantly after one. */
  fixed: number;
  rate: number | null;
  /** Per pattern: its significant check, else its tested check with the least p-value, else its last check. */
  patterns: PatternFixCheck[];
}

/**
 * Each pattern first seen before a promotion in the window, against that promotion: its failures among all the
 * tenant's traces in the `spanMs` before and after it (the after side ends at `now` at the latest).
 */
export async function fixSuccess(
  db: Queryable,
  tenantId: string,
  window: Window,
  spanMs: number,
  now: Date,
): Promise<FixSuccess> {
  const checks = await fixChecks(db, tenantId, window, spanMs, now);
  const testedIds = new Set(checks.filter((c) => c.z !== null).map((c) => c.patternId));
  const fixedIds = new Set(checks.filter((c) => c.fixed).map((c) => c.patternId));
  return {
    test: proportionFallTestName,
    tested: testedIds.size,
    fixed: fixedIds.size,
    rate: testedIds.size > 0 ? fixedIds.size / testedIds.size : null,
    patterns: representativeChecks(checks),
  };
}

async function fixChecks(
  db: Queryable,
  tenantId: string,
  window: Window,
  spanMs: number,
  now: Date,
): Promise<PatternFixCheck[]> {
  const [promotions, patterns] = await Promise.all([
    promotionsBetween(db, tenantId, window),
    patternHeads(db, tenantId),
  ]);
  const checks: PatternFixCheck[] = [];
  for (const promotion of promotions) {
    const before: Window = { from: new Date(promotion.at.getTime() - spanMs), to: promotion.at };
    const after: Window = {
      from: promotion.at,
      to: new Date(Math.min(promotion.at.getTime() + spanMs, now.getTime())),
    };
    const [n, m, failuresBefore, failuresAfter] = await Promise.all([
      tracesBetween(db, tenantId, before),
      tracesBetween(db, tenantId, after),
      patternFailuresBetween(db, tenantId, before),
      patternFailuresBetween(db, tenantId, after),
    ]);
    for (const p of patterns) {
      if (!p.firstSeen || p.firstSeen >= promotion.at) continue;
      const a = failuresBefore.get(p.id) ?? 0;
      const b = failuresAfter.get(p.id) ?? 0;
      const pooled = n + m > 0 ? (a + b) / (n + m) : 0;
      const enough = n * pooled >= MIN_EXPECTED_FAILURES && m * pooled >= MIN_EXPECTED_FAILURES;
      const test = enough ? proportionFall(a, n, b, m) : null;
      checks.push({
        patternId: p.id,
        label: p.label,
        deploymentId: promotion.id,
        promotedAt: promotion.at.toISOString(),
        before: { failures: a, traces: n, rate: n > 0 ? a / n : null },
        after: { failures: b, traces: m, rate: m > 0 ? b / m : null },
        z: test?.z ?? null,
        pValue: test?.pValue ?? null,
        fixed: test !== null && test.pValue < FIX_ALPHA,
        ...(test
          ? {}
          : {
              untested: `fewer than ${MIN_EXPECTED_FAILURES} failures expected on a side (${(n * pooled).toFixed(1)} before, ${(m * pooled).toFixed(1)} after)`,
            }),
      });
    }
  }
  return checks;
}

/** One check per pattern: a significant one, else the tested one with the least p-value, else the last one. */
function representativeChecks(checks: PatternFixCheck[]): PatternFixCheck[] {
  const best = new Map<string, PatternFixCheck>();
  const rank = (c: PatternFixCheck) => (c.fixed ? 0 : c.pValue !== null ? 1 : 2);
  for (const c of checks) {
    const held = best.get(c.patternId);
    if (
      !held ||
      rank(c) < rank(held) ||
      (rank(c) === rank(held) && rank(c) < 2 && (c.pValue ?? 1) < (held.pValue ?? 1)) ||
      (rank(c) === 2 && rank(held) === 2)
    )
      best.set(c.patternId, c);
  }
  return [...best.values()];
}
