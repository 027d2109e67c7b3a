import { getReleaseSettings } from "../deploy/release-settings.ts";
import { failureRatesBetween } from "../failures/live-failure-rates.ts";
import { getJudgeModel, latestCalibration, latestRubric } from "../judges/judge-store.ts";
import type { Queryable } from "../store/database.ts";
import { listModelVersions } from "../store/model-registry.ts";
import { getAnalyticsSettings } from "./analytics-settings.ts";
import {
  patternFailuresBetween,
  patternHeads,
  patternsFirstSeenByWeek,
  patternsWithDatasets,
  promotionsBetween,
  tokensByModel,
  tracesBetween,
  type Window,
} from "./analytics-store.ts";
import { type Recommendation, recommend } from "./recommendations.ts";
import { proportionFall, proportionFallTestName } from "./two-proportion-test.ts";

const DAY_MS = 86_400_000;

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

/** Judged gateway traffic of one model version, and the change from the version it was trained from. */
export interface VersionImprovement {
  modelVersion: string;
  name: string | null;
  parentId: string | null;
  judged: number;
  failures: number;
  failureRate: number;
  parentFailureRate: number | null;
  /** failureRate − parentFailureRate (negative: fewer failures). */
  change: number | null;
}

/** What `GET /v1/analytics` answers. */
export interface TenantAnalytics {
  window: { since: string; until: string; fixWindowDays: number };
  patternsPerWeek: { week: string; patterns: number }[];
  fixSuccess: {
    test: string;
    /** Patterns with at least one tested promotion. */
    tested: number;
    /** Of those, patterns whose failure rate fell significantly after one. */
    fixed: number;
    rate: number | null;
    /** Per pattern: its significant check, else its tested check with the least p-value, else its last check. */
    patterns: PatternFixCheck[];
  };
  improvement: VersionImprovement[];
  cost: {
    models: { model: string; promptTokens: number; completionTokens: number; costUsd: number | null }[];
    /** Sum over priced models. */
    totalUsd: number;
    /** Models with tokens but no price set. */
    unpriced: string[];
    /** Σ over versions with a parent of max(0, parent rate − its rate) × its judged calls. */
    failuresAvoided: number;
    /** failuresAvoided × the tenant's cost per failure; null until one is set. */
    failuresAvoidedUsd: number | null;
  };
  recommendations: Recommendation[];
}

/**
 * A tenant's learning analytics over [since, until): patterns found per week, the fix success rate of promotions,
 * each model version's failure rate against its parent's, cost and failures avoided, and recommendations.
 */
export async function tenantAnalytics(
  db: Queryable,
  tenantId: string,
  options: { since: Date; until: Date; fixWindowDays: number; now?: Date },
): Promise<TenantAnalytics> {
  const window: Window = { from: options.since, to: options.until };
  const now = options.now ?? new Date();
  const [perWeek, fixes, rates, models, settings, tokens] = await Promise.all([
    patternsFirstSeenByWeek(db, tenantId, window),
    fixChecks(db, tenantId, window, options.fixWindowDays * DAY_MS, now),
    failureRatesBetween(db, tenantId, options.since, options.until),
    listModelVersions(db, tenantId),
    getAnalyticsSettings(db, tenantId),
    tokensByModel(db, tenantId, window),
  ]);
  const byId = new Map(models.map((m) => [m.id, m]));
  const rateOf = new Map(rates.map((r) => [r.modelVersion, r]));
  const improvement = rates.map((r): VersionImprovement => {
    const parentId = byId.get(r.modelVersion)?.parentId ?? null;
    const parent = parentId ? rateOf.get(parentId) : undefined;
    return {
      modelVersion: r.modelVersion,
      name: byId.get(r.modelVersion)?.name ?? null,
      parentId,
      judged: r.n,
      failures: r.failures,
      failureRate: r.failureRate,
      parentFailureRate: parent ? parent.failureRate : null,
      change: parent ? r.failureRate - parent.failureRate : null,
    };
  });
  const failuresAvoided = improvement.reduce(
    (sum, v) =>
      sum + (v.parentFailureRate === null ? 0 : Math.max(0, v.parentFailureRate - v.failureRate) * v.judged),
    0,
  );
  const priced = tokens.map((t) => {
    const price = settings.prices[t.model];
    return {
      ...t,
      costUsd: price ? (t.promptTokens * price.prompt + t.completionTokens * price.completion) / 1e6 : null,
    };
  });
  const tested = fixes.filter((f) => f.z !== null);
  const fixedIds = new Set(fixes.filter((f) => f.fixed).map((f) => f.patternId));
  const testedIds = new Set(tested.map((f) => f.patternId));
  return {
    window: {
      since: options.since.toISOString(),
      until: options.until.toISOString(),
      fixWindowDays: options.fixWindowDays,
    },
    patternsPerWeek: perWeek,
    fixSuccess: {
      test: proportionFallTestName,
      tested: testedIds.size,
      fixed: fixedIds.size,
      rate: testedIds.size > 0 ? fixedIds.size / testedIds.size : null,
      patterns: representativeChecks(fixes),
    },
    improvement,
    cost: {
      models: priced,
      totalUsd: priced.reduce((sum, m) => sum + (m.costUsd ?? 0), 0),
      unpriced: priced.filter((m) => m.costUsd === null).map((m) => m.model),
      failuresAvoided,
      failuresAvoidedUsd: settings.costPerFailure === null ? null : failuresAvoided * settings.costPerFailure,
    },
    recommendations: await recommend(db, tenantId, {
      until: options.until,
      models,
      requireApproval: (await getReleaseSettings(db, tenantId)).gates.requireApproval,
      patternsWithDatasets: await patternsWithDatasets(db, tenantId),
      judge: {
        on: Boolean((await latestRubric(db, tenantId)) && (await getJudgeModel(db, tenantId))),
        calibration: await latestCalibration(db, tenantId),
      },
    }),
  };
}

/** Each pattern (that existed before) against each promotion in the window: its failure rate before and after. */
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
