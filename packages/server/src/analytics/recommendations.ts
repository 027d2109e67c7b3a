import type { StoredCalibration } from "../judges/judge-store.ts";
import type { Queryable } from "../store/database.ts";
import type { ModelVersion } from "../store/model-registry.ts";

/** Something the tenant should do, why (with the figures), and the records it concerns. */
export interface Recommendation {
  kind:
    | "growing_pattern_without_dataset"
    | "candidate_awaiting_approval"
    | "judge_uncalibrated"
    | "judge_low_calibration";
  reason: string;
  ids: string[];
}

/** A judge calibration below either bound is low: Cohen's kappa under 0.6, or agreement under 0.8. */
export const LOW_CALIBRATION = { kappa: 0.6, agreement: 0.8 };

const WEEK_MS = 7 * 86_400_000;

/**
 * The recommendations of a tenant at `until`: each pattern whose failures in the last 7 days outnumber the 7 before
 * and that no dataset draws on; each validated candidate waiting for a person's approval; a judge that runs a rubric
 * and model it was never calibrated with, or whose latest calibration is low.
 */
export async function recommend(
  db: Queryable,
  tenantId: string,
  context: {
    until: Date;
    models: ModelVersion[];
    requireApproval: boolean;
    patternsWithDatasets: Set<string>;
    /** The judge's rubric version and model while it has both (it runs), and its latest calibration. */
    judge: {
      current: { rubricVersion: number; model: string } | undefined;
      calibration: StoredCalibration | undefined;
    };
  },
): Promise<Recommendation[]> {
  const split = new Date(context.until.getTime() - WEEK_MS);
  const rows = await db.query<{ pattern_id: string; label: string; recent: number; earlier: number }>(
    `select f.pattern_id, p.label, (count(*) filter (where f.started_at >= $2))::int as recent,
            (count(*) filter (where f.started_at < $2))::int as earlier
       from failures f join patterns p on p.tenant_id = f.tenant_id and p.id = f.pattern_id
      where f.tenant_id = $1 and f.started_at >= $3 and f.started_at < $4
      group by 1, 2 order by 1`,
    [
      tenantId,
      split.toISOString(),
      new Date(split.getTime() - WEEK_MS).toISOString(),
      context.until.toISOString(),
    ],
  );
  const out: Recommendation[] = rows
    .filter((r) => Number(r.recent) > Number(r.earlier) && !context.patternsWithDatasets.has(r.pattern_id))
    .map((r) => ({
      kind: "growing_pattern_without_dataset",
      reason: `pattern "${r.label}" grew from ${r.earlier} failures to ${r.recent} in the last 7 days and no dataset draws on it: build one (POST /v1/datasets) so a run can fix it`,
      ids: [r.pattern_id],
    }));
  if (context.requireApproval)
    for (const m of context.models.filter((v) => v.status === "validated"))
      out.push({
        kind: "candidate_awaiting_approval",
        reason: `candidate ${m.name} passed validation and waits for a person's approval (arc models approve ${m.id}) before its canary starts`,
        ids: [m.id],
      });
  const { current, calibration } = context.judge;
  const stale =
    current &&
    calibration &&
    (calibration.rubricVersion !== current.rubricVersion || calibration.model !== current.model);
  if (current && (!calibration || stale))
    out.push({
      kind: "judge_uncalibrated",
      reason: calibration
        ? `the judge runs rubric v${current.rubricVersion} on ${current.model}, but its latest calibration (${calibration.at.slice(0, 10)}) was of rubric v${calibration.rubricVersion} on ${calibration.model}: run arc judges calibrate`
        : `the judge runs rubric v${current.rubricVersion} on ${current.model} but was never calibrated against known labels: run arc judges calibrate`,
      ids: [],
    });
  else if (calibration) {
    const { kappa, agreement } = calibration.report;
    if (
      (kappa !== null && kappa < LOW_CALIBRATION.kappa) ||
      (agreement !== null && agreement < LOW_CALIBRATION.agreement)
    )
      out.push({
        kind: "judge_low_calibration",
        reason: `the judge's latest calibration (${calibration.at.slice(0, 10)}, rubric v${calibration.rubricVersion} on ${calibration.model}) has agreement ${agreement?.toFixed(3) ?? "–"} and kappa ${kappa?.toFixed(3) ?? "–"}, below ${LOW_CALIBRATION.agreement} or ${LOW_CALIBRATION.kappa}: revise the rubric or pick a stronger judge model`,
        ids: [],
      });
  }
  return out;
}
