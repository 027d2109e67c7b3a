import { getReleaseSettings } from "../deploy/release-settings.ts";
import { failureRatesBetween } from "../failures/live-failure-rates.ts";
import { getJudgeModel, latestCalibration, latestRubric } from "../judges/judge-store.ts";
import type { Queryable } from "../store/database.ts";
import { listModelVersions } from "../store/model-registry.ts";
import { getAnalyticsSettings } from "./analytics-settings.ts";
import {
  patternsFirstSeenByWeek,
  patternsWithDatasets,
  tokensByModel,
  type Window,
} from "./analytics-store.ts";
import { failuresAvoided, type VersionAvoided } from "./failures-avoided.ts";
import { type FixSuccess, fixSuccess } from "./fix-success.ts";
import { modelCosts } from "./model-costs.ts";
import { type Recommendation, recommend } from "./recommendations.ts";

const DAY_MS = 86_400_000;

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
  fixSuccess: FixSuccess;
  improvement: VersionImprovement[];
  cost: {
    models: { model: string; promptTokens: number; completionTokens: number; costUsd: number | null }[];
    /** Sum over priced models. */
    totalUsd: number;
    /** Models with tokens but no price set. */
    unpriced: string[];
    /** Σ of `avoided[].failuresAvoided`. */
    failuresAvoided: number;
    /** failuresAvoided × the tenant's cost per failure; null until one is set. */
    failuresAvoidedUsd: number | null;
    /** Per version a promotion put in place of a baseline. */
    avoided: VersionAvoided[];
  };
  recommendations: Recommendation[];
}

/**
 * A tenant's learning analytics over [since, until): patterns found per week, the fix success rate of promotions,
 * each model version's failure rate against its parent's, cost, failures avoided by promotions, and recommendations.
 */
export async function tenantAnalytics(
  db: Queryable,
  tenantId: string,
  options: { since: Date; until: Date; fixWindowDays: number; now?: Date },
): Promise<TenantAnalytics> {
  const window: Window = { from: options.since, to: options.until };
  const now = options.now ?? new Date();
  const spanMs = options.fixWindowDays * DAY_MS;
  const [
    perWeek,
    fixes,
    rates,
    models,
    settings,
    tokens,
    release,
    datasets,
    rubric,
    judgeModel,
    calibration,
  ] = await Promise.all([
    patternsFirstSeenByWeek(db, tenantId, window),
    fixSuccess(db, tenantId, window, spanMs, now),
    failureRatesBetween(db, tenantId, options.since, options.until),
    listModelVersions(db, tenantId),
    getAnalyticsSettings(db, tenantId),
    tokensByModel(db, tenantId, window),
    getReleaseSettings(db, tenantId),
    patternsWithDatasets(db, tenantId),
    latestRubric(db, tenantId),
    getJudgeModel(db, tenantId),
    latestCalibration(db, tenantId),
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
  const avoided = await failuresAvoided(db, tenantId, rates, spanMs);
  const avoidedTotal = avoided.reduce((sum, v) => sum + v.failuresAvoided, 0);
  const priced = modelCosts(tokens, models, settings.prices);
  return {
    window: {
      since: options.since.toISOString(),
      until: options.until.toISOString(),
      fixWindowDays: options.fixWindowDays,
    },
    patternsPerWeek: perWeek,
    fixSuccess: fixes,
    improvement,
    cost: {
      models: priced,
      totalUsd: priced.reduce((sum, m) => sum + (m.costUsd ?? 0), 0),
      unpriced: priced.filter((m) => m.costUsd === null).map((m) => m.model),
      failuresAvoided: avoidedTotal,
      failuresAvoidedUsd: settings.costPerFailure === null ? null : avoidedTotal * settings.costPerFailure,
      avoided,
    },
    recommendations: await recommend(db, tenantId, {
      until: options.until,
      models,
      requireApproval: release.gates.requireApproval,
      patternsWithDatasets: datasets,
      judge: {
        current:
          rubric && judgeModel ? { rubricVersion: rubric.version, model: judgeModel.model } : undefined,
        calibration,
      },
    }),
  };
}
