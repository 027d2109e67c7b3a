import {
  type CalibrationItem,
  type CalibrationReport,
  type CalibrationVerdict,
  calibrationReport,
  type DetectorRegistry,
  type Feedback,
  type Judgement,
  NotFoundError,
  type Trace,
} from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { getTraces } from "../store/trace-store.ts";
import { addReviewItems, goldLabels } from "./annotation-store.ts";
import { getJudgeModel, latestRubric, saveCalibration } from "./judge-store.ts";
import { type JudgeUpstreams, tenantJudgeDetector } from "./tenant-judge.ts";
import { tracesToolNames } from "./traffic-tools.ts";

/** Traces judged at once: the judge's own budget paces the calls. */
const CONCURRENT_JUDGEMENTS = 4;

/** A judge's calibration: which rubric and model were measured, on how many recent traces, and the figures. */
export interface JudgeCalibration {
  rubricVersion: number;
  model: string;
  /** Traces read (recent ones and recently reviewed ones); those its verifiers or people's feedback label were judged. */
  tracesRead: number;
  /** Labelled traces by what labelled them: a detector id (`feedback` for a person's feedback, a family's verifier...). */
  labelledBy: Record<string, number>;
  report: CalibrationReport;
  /** Each labelled trace: the label, what gave it, and the judge's verdict (null: it could not judge). */
  items: (CalibrationItem & { labelledBy: string })[];
}

/** The review queue of traces whose judge verdict and label disagreed in a calibration. */
export const DISAGREEMENTS_QUEUE = "judge-disagreements";
/** The review queue of traces a calibration read that nothing could label. */
export const UNLABELLED_QUEUE = "unlabelled";

/** Whether a family's verifier passed the trace (it then labels the trace, whatever a person said). */
function passedByVerifier(judgement: Judgement): boolean {
  return judgement.verdicts.some((v) => v.detectorId === "verifier" && v.status === "passed");
}

/** What gave a trace its label: the deciding failure's detector, or the detectors that passed it. */
function labelSource(judgement: Judgement): string {
  if (judgement.primary) return judgement.primary.detectorId;
  return [...new Set(judgement.verdicts.filter((v) => v.status === "passed").map((v) => v.detectorId))].join(
    "+",
  );
}

/** A trace with its label and what gave it. */
interface Labelled {
  trace: Trace;
  label: CalibrationVerdict;
  labelledBy: string;
}

/**
 * Labels traces without the judge: a family's verifier labels what it can decide, a person's annotation (the gold
 * set) the rest, then feedback and the heuristics; a trace nothing labels is returned apart.
 */
async function labelTraces(
  labeller: DetectorRegistry,
  traces: Iterable<Trace & { feedback: Feedback[] }>,
  gold: Map<string, CalibrationVerdict>,
): Promise<{ labelled: Labelled[]; unlabelled: string[] }> {
  const labelled: Labelled[] = [];
  const unlabelled: string[] = [];
  for (const trace of traces) {
    const judgement = await labeller.judge(trace, trace.feedback);
    const annotated = gold.get(trace.id);
    if (annotated && judgement.primary?.detectorId !== "verifier" && !passedByVerifier(judgement)) {
      labelled.push({ trace, label: annotated, labelledBy: "annotation" });
      continue;
    }
    if (judgement.status === "unknown") {
      unlabelled.push(trace.id);
      continue;
    }
    const failed = judgement.status === "failed";
    labelled.push({
      trace,
      // a person's feedback says failed or not, never which rubric class: its `user_feedback` would match none
      label: {
        failed,
        ...(failed && judgement.primary?.class && judgement.primary.detectorId !== "feedback"
          ? { class: judgement.primary.class }
          : {}),
      },
      labelledBy: labelSource(judgement),
    });
  }
  return { labelled, unlabelled };
}

/** Puts in review queues what the judge and the labels disagreed on, and what nothing could label. */
async function queueForReview(
  db: Queryable,
  tenantId: string,
  judgeName: string,
  items: JudgeCalibration["items"],
  unlabelled: string[],
): Promise<void> {
  await addReviewItems(
    db,
    tenantId,
    DISAGREEMENTS_QUEUE,
    items
      .filter((item) => item.judged && item.judged.failed !== item.label.failed)
      .map((item) => ({
        traceId: item.traceId,
        reason: `${judgeName} said ${item.judged?.failed ? "failed" : "passed"}; ${item.labelledBy} said ${item.label.failed ? "failed" : "passed"}`,
      })),
  );
  await addReviewItems(
    db,
    tenantId,
    UNLABELLED_QUEUE,
    unlabelled.map((traceId) => ({
      traceId,
      reason: "no verifier, feedback or annotation labels it: a person's label adds it to the gold set",
    })),
  );
}

/**
 * Runs the tenant's judge on its `limit` most recent traces, the `limit` its people most recently gave feedback on,
 * and the `limit` they most recently annotated (`POST /v1/annotations`: the gold set, which labels any trace no
 * family's verifier decides), that the tenant's other detectors (its families'
 * verifiers, the heuristics) or people's feedback on them (a low score, a negative label, a correction fails a trace;
 * other feedback passes it) label passed or failed, and compares: agreement, Cohen's kappa, precision and recall per
 * class. The labels are computed now, without the judge, so a trace the judge already flagged is labelled like any
 * other: `labeller` is the tenant's detector registry built without its judge. Traces where the judge and the label
 * disagree join the `judge-disagreements` review queue, and traces nothing labelled the `unlabelled` one.
 */
export async function calibrateJudge(
  db: Queryable,
  tenantId: string,
  deps: { upstreams: JudgeUpstreams; labeller: DetectorRegistry },
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
  const [recent, reviewed, gold] = await Promise.all([
    db.query<{ id: string }>(
      "select id from traces where tenant_id = $1 order by started_at desc, id limit $2",
      [tenantId, limit],
    ),
    db.query<{ id: string }>(
      `select trace_id as id from feedback where tenant_id = $1
       group by trace_id order by max(created_at) desc, trace_id limit $2`,
      [tenantId, limit],
    ),
    goldLabels(db, tenantId, limit),
  ]);
  const ids = [...new Set([...recent, ...reviewed].map((r) => r.id).concat([...gold.keys()]))];
  const traces = await getTraces(db, tenantId, ids);
  const { labelled, unlabelled } = await labelTraces(deps.labeller, traces.values(), gold);
  const items: JudgeCalibration["items"] = new Array(labelled.length);
  let next = 0;
  const judgeNext = async () => {
    while (next < labelled.length) {
      const k = next++;
      const { trace, label, labelledBy } = labelled[k];
      const verdict = await judge.judge(trace);
      items[k] = {
        traceId: trace.id,
        label,
        labelledBy,
        judged:
          verdict.status === "unknown"
            ? null
            : { failed: verdict.failed, ...(verdict.failed && verdict.path ? { class: verdict.path } : {}) },
      };
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_JUDGEMENTS }, judgeNext));
  const report = calibrationReport(items);
  await queueForReview(
    db,
    tenantId,
    `the judge (${model.model}, rubric v${rubric.version})`,
    items,
    unlabelled,
  );
  const tools = tracesToolNames(labelled.map((l) => l.trace));
  await saveCalibration(db, tenantId, { rubricVersion: rubric.version, model: model.model, report, tools });
  return {
    rubricVersion: rubric.version,
    model: model.model,
    tracesRead: traces.size,
    labelledBy: labelled.reduce<Record<string, number>>((counts, { labelledBy }) => {
      counts[labelledBy] = (counts[labelledBy] ?? 0) + 1;
      return counts;
    }, {}),
    report,
    items,
  };
}
