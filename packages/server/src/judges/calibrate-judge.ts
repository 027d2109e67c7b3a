import {
  type CalibrationItem,
  type CalibrationReport,
  type CalibrationVerdict,
  calibrationReport,
  NotFoundError,
  type Trace,
} from "@arc/core";
import { tenantRegistry } from "../failures/detector-config-store.ts";
import type { RegistrySetup } from "../failures/failure-pipeline-config.ts";
import type { Queryable } from "../store/database.ts";
import { getTraces } from "../store/trace-store.ts";
import { getJudgeModel, latestRubric } from "./judge-store.ts";
import { type JudgeUpstreams, tenantJudgeDetector } from "./tenant-judge.ts";

/** Traces judged at once: the judge's own budget paces the calls. */
const CONCURRENT_JUDGEMENTS = 4;

/** A judge's calibration: which rubric and model were measured, on how many recent traces, and the figures. */
export interface JudgeCalibration {
  rubricVersion: number;
  model: string;
  /** Recent traces read; those the tenant's verifier could label were judged. */
  tracesRead: number;
  report: CalibrationReport;
  /** Each labelled trace: the label, and the judge's verdict (null: it could not judge). */
  items: CalibrationItem[];
}

/**
 * Runs the tenant's judge on its `limit` most recent traces that the tenant's other detectors (its families'
 * verifiers, the heuristics) label passed or failed, and compares: agreement, Cohen's kappa, precision and recall per
 * class. The labels are computed now, without the judge, so a trace the judge already flagged is labelled like any
 * other.
 */
export async function calibrateJudge(
  db: Queryable,
  tenantId: string,
  deps: { upstreams: JudgeUpstreams; setupRegistry?: RegistrySetup },
  limit: number,
): Promise<JudgeCalibration> {
  const [judge, rubric, model] = await Promise.all([
    tenantJudgeDetector(db, tenantId, deps.upstreams),
    latestRubric(db, tenantId),
    getJudgeModel(db, tenantId),
  ]);
  if (!judge || !rubric || !model)
    throw new NotFoundError(
      "judge: this tenant has no judge yet: set a rubric (PUT /v1/judges/rubric) and a model (PUT /v1/judges/model)",
    );
  const labeller = await tenantRegistry(db, tenantId, deps.setupRegistry);
  const ids = (
    await db.query<{ id: string }>(
      "select id from traces where tenant_id = $1 order by started_at desc, id limit $2",
      [tenantId, limit],
    )
  ).map((r) => r.id);
  const traces = await getTraces(db, tenantId, ids);
  const labelled: { trace: Trace; label: CalibrationVerdict }[] = [];
  for (const trace of traces.values()) {
    const judgement = await labeller.judge(trace);
    if (judgement.status === "unknown") continue;
    const failed = judgement.status === "failed";
    labelled.push({
      trace,
      label: { failed, ...(failed && judgement.primary?.class ? { class: judgement.primary.class } : {}) },
    });
  }
  const items: CalibrationItem[] = new Array(labelled.length);
  let next = 0;
  const judgeNext = async () => {
    while (next < labelled.length) {
      const k = next++;
      const { trace, label } = labelled[k];
      const verdict = await judge.judge(trace);
      items[k] = {
        traceId: trace.id,
        label,
        judged:
          verdict.status === "unknown"
            ? null
            : { failed: verdict.failed, ...(verdict.failed && verdict.path ? { class: verdict.path } : {}) },
      };
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_JUDGEMENTS }, judgeNext));
  return {
    rubricVersion: rubric.version,
    model: model.model,
    tracesRead: traces.size,
    report: calibrationReport(items),
    items,
  };
}
