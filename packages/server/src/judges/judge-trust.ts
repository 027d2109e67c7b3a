import { type CalibrationReport, DetectionConfig } from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { loadDetectorConfig } from "../store/detector-configs.ts";
import { getJudgeModel, latestCalibration, latestRubric } from "./judge-store.ts";
import { trafficToolNames } from "./traffic-tools.ts";

/** The labelled traces a calibration must have judged before its kappa counts. */
export const MIN_CALIBRATION_ITEMS = 50;

/**
 * Why a calibration's figures do not earn trust (fewer than `MIN_CALIBRATION_ITEMS` judged labelled traces, or a
 * Cohen's kappa under `minKappa` or undefined), or undefined when they do: the gate `judgeTrust` applies.
 */
export function calibrationRefusal(
  report: Pick<CalibrationReport, "judged" | "kappa">,
  minKappa: number,
): string | undefined {
  const { judged, kappa } = report;
  if (judged < MIN_CALIBRATION_ITEMS)
    return `its calibration judged ${judged} labelled traces, under ${MIN_CALIBRATION_ITEMS}`;
  if (kappa === null || kappa < minKappa)
    return `its calibration's kappa is ${kappa === null ? "undefined" : kappa.toFixed(3)}, under the tenant's judgeMinKappa ${minKappa}`;
  return undefined;
}

/** What changed since the judge's latest calibration: its rubric, its model, or the tools its traffic offers. */
export type JudgeChange = "rubric" | "model" | "tools";

/**
 * Whether a tenant's judge may be used: trusted, on what basis, or why not; `change` when the latest calibration
 * measured a judge that has since changed (a re-calibration is then scheduled, see `runDueRecalibrations`).
 */
export type JudgeTrust =
  | { trusted: true; basis: string }
  | { trusted: false; reason: string; change?: JudgeChange };

/**
 * A tenant's judge is trusted once its latest calibration measured its latest rubric version with its model, on at
 * least `MIN_CALIBRATION_ITEMS` judged labelled traces, with Cohen's kappa at or above the tenant's `judgeMinKappa`
 * (0.6 by default; null trusts the judge uncalibrated, the tenant's explicit choice). A new rubric version, another
 * model, or a tool offered to the traffic since the calibration that the calibration's traces were never offered
 * makes it untrusted until calibrated again. An untrusted judge rewards no training, gates no validation and fails no
 * trace.
 */
export async function judgeTrust(db: Queryable, tenantId: string): Promise<JudgeTrust> {
  const [rubric, model, calibration, config] = await Promise.all([
    latestRubric(db, tenantId),
    getJudgeModel(db, tenantId),
    latestCalibration(db, tenantId),
    loadDetectorConfig(db, tenantId),
  ]);
  if (!rubric || !model) return { trusted: false, reason: "the tenant has no judge (a rubric and a model)" };
  const minKappa = DetectionConfig.parse(config).judgeMinKappa;
  if (minKappa === null)
    return { trusted: true, basis: "the tenant's judgeMinKappa is null: it trusts its judge uncalibrated" };
  const calibrate = `calibrate it on at least ${MIN_CALIBRATION_ITEMS} labelled traces to a kappa of ${minKappa} (arc judges calibrate)`;
  const untrusted = (why: string, change?: JudgeChange): JudgeTrust => ({
    trusted: false,
    reason: `${why}: ${calibrate}`,
    ...(change ? { change } : {}),
  });
  if (!calibration)
    return untrusted(`the judge (${model.model}, rubric v${rubric.version}) was never calibrated`);
  if (calibration.rubricVersion !== rubric.version)
    return untrusted(
      `rubric v${rubric.version} was never calibrated (the latest calibration measured v${calibration.rubricVersion})`,
      "rubric",
    );
  if (calibration.model !== model.model)
    return untrusted(
      `the judge model ${model.model} was never calibrated (the latest calibration measured ${calibration.model})`,
      "model",
    );
  const calibrated = new Set(calibration.tools ?? []);
  const unseen = (await trafficToolNames(db, tenantId, calibration.at)).filter(
    (name) => !calibrated.has(name),
  );
  if (unseen.length > 0)
    return untrusted(
      `the traffic since the calibration offers tools its traces were never offered (${unseen.slice(0, 5).join(", ")}${unseen.length > 5 ? `, and ${unseen.length - 5} more` : ""})`,
      "tools",
    );
  const refusal = calibrationRefusal(calibration.report, minKappa);
  if (refusal) return untrusted(refusal);
  const { judged, kappa } = calibration.report;
  return {
    trusted: true,
    basis: `calibrated at ${calibration.at}: kappa ${kappa?.toFixed(3)} on ${judged} labelled traces (judgeMinKappa ${minKappa})`,
  };
}
