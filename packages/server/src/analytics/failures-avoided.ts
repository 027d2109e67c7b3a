import { failureRatesBetween, type VersionRate } from "../failures/live-failure-rates.ts";
import type { Queryable } from "../store/database.ts";
import { replacementsOf } from "./analytics-store.ts";

/** What one promoted version saved against the baseline it replaced. */
export interface VersionAvoided {
  modelVersion: string;
  deploymentId: string;
  /** The version it replaced (the deployment's control). */
  baselineId: string;
  /** The baseline's judged gateway failure rate in the span before the promotion; null when it served none there. */
  baselineFailureRate: number | null;
  /** The version's judged gateway failure rate in the analytics window. */
  failureRate: number;
  /** Its judged gateway calls in the analytics window. */
  judged: number;
  /** max(0, baselineFailureRate − failureRate) × judged; 0 when the baseline's rate is unknown. */
  failuresAvoided: number;
}

/**
 * For each version with judged traffic in the window that a promotion put in place of a baseline: the failures it
 * avoided, (the baseline's rate in the `spanMs` before the promotion − its own rate) × its judged calls, at least 0.
 */
export async function failuresAvoided(
  db: Queryable,
  tenantId: string,
  rates: VersionRate[],
  spanMs: number,
): Promise<VersionAvoided[]> {
  const replacements = await replacementsOf(
    db,
    tenantId,
    rates.map((r) => r.modelVersion),
  );
  const rateOf = new Map(rates.map((r) => [r.modelVersion, r]));
  return Promise.all(
    replacements.map(async (d): Promise<VersionAvoided> => {
      const own = rateOf.get(d.candidateId) as VersionRate;
      const before = await failureRatesBetween(db, tenantId, new Date(d.at.getTime() - spanMs), d.at);
      const baseline = before.find((r) => r.modelVersion === d.controlId);
      const baselineFailureRate = baseline ? baseline.failureRate : null;
      return {
        modelVersion: d.candidateId,
        deploymentId: d.id,
        baselineId: d.controlId,
        baselineFailureRate,
        failureRate: own.failureRate,
        judged: own.n,
        failuresAvoided:
          baselineFailureRate === null ? 0 : Math.max(0, baselineFailureRate - own.failureRate) * own.n,
      };
    }),
  );
}
