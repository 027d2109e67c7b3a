import type { WarmUpReport } from "@arc/rl";
import { listDeployments } from "../deploy/deployment-store.ts";
import {
  failureRatesBetween,
  failureRatesOverTime,
  listPatterns,
  patternIncidence,
  pendingDetections,
} from "../failures/index.ts";
import type { Queryable } from "../store/database.ts";
import { listModelVersions } from "../store/model-registry.ts";
import { listValidations } from "../validate/validate-candidate.ts";
import type { DemoOptions } from "./demo-options.ts";
import { MIN_MEASURE_MS, WRAP_UP_MS } from "./demo-plan.ts";
import { type DemoProgress, sleep } from "./demo-progress.ts";
import { type DemoResult, type DemoVersion, demoVerdict } from "./demo-result.ts";
import { patternVerdicts } from "./pattern-verdicts.ts";
import type { DpoCandidate } from "./train-dpo.ts";

/**
 * Warm-up steps that halve the failure rate with room to spare: from the base model on 1,700 production prompts, a
 * 2,000-step plan judged 0.043 on 512 held-out tasks at step 1,500 (base 0.176), where a 1,000-step plan ended at 0.080.
 */
const HALVING_STEPS = 1500;

/**
 * Why a warm-up that did not reach its held-out target fell short and what to do, or null when it reached it. The
 * suggested budget scales the demo's minutes by the time the steps that halve the rate (`--sft-steps` at most)
 * need over the time the warm-up had.
 */
export function warmupShortfall(warmup: WarmUpReport, minutes: number): string | null {
  if (warmup.targetReachedAtStep !== null || warmup.heldOutTarget === null) return null;
  const speed =
    warmup.secondsPerStep === null
      ? "no step was timed"
      : `${warmup.secondsPerStep.toFixed(2)} s a step${warmup.tokensPerSecond === null ? "" : `, ${warmup.tokensPerSecond.toFixed(0)} training tokens/s`}`;
  const held =
    warmup.heldOutFailureRate === null || warmup.heldOutUpperBound === null
      ? "was not judged"
      : `${warmup.heldOutFailureRate.toFixed(3)} has a 95% upper bound of ${warmup.heldOutUpperBound.toFixed(3)}, above the target ${warmup.heldOutTarget.toFixed(3)}`;
  const replanned = warmup.replans.at(-1);
  const replan = replanned ? `re-planned to ${replanned.plannedSteps} when the machine slowed down; ` : "";
  const why = `the SFT warm-up did ${warmup.steps} of ${warmup.plannedSteps} planned steps (${replan}--sft-steps allows ${warmup.maxSteps}) at ${speed}, and its held-out failure rate ${held}`;
  if (warmup.steps >= warmup.maxSteps) return `${why}; run with a larger --sft-steps and --minutes`;
  const steps = Math.min(warmup.maxSteps, HALVING_STEPS);
  const needS = warmup.secondsPerStep === null ? null : steps * warmup.secondsPerStep;
  const suggested =
    needS === null || warmup.budgetS <= 0 ? null : Math.ceil((minutes * needS) / warmup.budgetS);
  const gives =
    steps === warmup.maxSteps
      ? `all ${steps} steps`
      : `the ${steps} steps that halve the failure rate on an idle machine`;
  return `${why}; run with a larger --minutes${suggested !== null && suggested > minutes ? ` (about --minutes ${suggested} gives it ${gives} at this machine's pace)` : ""}`;
}

/**
 * The measure phase: the agent's traffic goes on, shown live, until the budget's wrap-up (or MIN_MEASURE_MS when the
 * candidate serves nothing, said in the notes); then the agent stops and detection catches up. Returns when it began.
 */
async function measureLive(context: {
  db: Queryable;
  tenantId: string;
  options: DemoOptions;
  progress: DemoProgress;
  stopAgent: () => Promise<void>;
  trafficLine: (phase: string) => Promise<string>;
}): Promise<Date> {
  const { db, tenantId, options, progress } = context;
  const measureFrom = new Date();
  const [decided] = await listDeployments(db, tenantId, 1);
  const candidateServes = decided?.status === "promoted" || decided?.status === "canary";
  const measureEnd = candidateServes
    ? Math.max(progress.at(1) - WRAP_UP_MS, Date.now() + MIN_MEASURE_MS)
    : Date.now() + MIN_MEASURE_MS;
  if (!candidateServes)
    progress.notes.push(
      `the candidate serves no traffic, so the base model still serves; the demo measured it ${MIN_MEASURE_MS / 1000} s more and stopped before its ${options.minutes}-minute budget.`,
    );
  while (Date.now() < measureEnd) {
    progress.live.update(await context.trafficLine("measure"));
    await sleep(1000);
  }
  await context.stopAgent();
  for (let i = 0; i < 40 && (await pendingDetections(db, tenantId)) > 0; i++) await sleep(250);
  progress.endPhase("measure", await context.trafficLine("measure"));
  return measureFrom;
}

/** Each failure pattern's failures under the base and under the final version, over their calls, with its verdict. */
async function patternsBetween(
  db: Queryable,
  tenantId: string,
  totals: { modelVersion: string; n: number }[],
  baseId: string,
  productionId: string,
) {
  const incidence = await patternIncidence(db, tenantId);
  const calls = (id: string) => totals.find((r) => r.modelVersion === id)?.n ?? 0;
  const failuresOf = (patternId: string, version: string) =>
    incidence.find((i) => i.patternId === patternId && i.modelVersion === version)?.failures ?? 0;
  return patternVerdicts(
    (await listPatterns(db, tenantId, { limit: 1000 })).map((p) => ({
      id: p.id,
      label: p.label,
      baseFailures: failuresOf(p.id, baseId),
      finalFailures: failuresOf(p.id, productionId),
    })),
    calls(baseId),
    calls(productionId),
  );
}

/** Each version with its calls, failures and failure rate over the whole demo (null: it served no judged call). */
function versionRates(
  versions: { id: string; name: string; status: string }[],
  totals: { modelVersion: string; n: number; failures: number; failureRate: number }[],
): DemoVersion[] {
  return versions.map((v) => {
    const t = totals.find((r) => r.modelVersion === v.id);
    return {
      id: v.id,
      name: v.name,
      status: v.status,
      n: t?.n ?? 0,
      failures: t?.failures ?? 0,
      failureRate: t ? t.failureRate : null,
    };
  });
}

/**
 * Phase 7 and the results: keeps the traffic running and measures the production model until the end of the
 * budget (a candidate that serves no traffic gets a short last look), then compiles what the demo measured.
 */
export async function measureAndSummarize(context: {
  db: Queryable;
  tenantId: string;
  options: DemoOptions;
  progress: DemoProgress;
  base: { id: string; name: string };
  candidate: DpoCandidate;
  warmup: WarmUpReport | null;
  baselineEnd: number;
  names: Map<string, string>;
  datasets: DemoResult["datasets"];
  gatesWhy: string;
  stopAgent: () => Promise<void>;
  trafficLine: (phase: string) => Promise<string>;
}): Promise<DemoResult> {
  const { db, tenantId, options, progress, base, candidate } = context;
  const measureFrom = await measureLive(context);

  const began = new Date(progress.began);
  const versionsNow = await listModelVersions(db, tenantId);
  const production = versionsNow.find((v) => v.status === "promoted") ?? base;
  const totals = await failureRatesBetween(db, tenantId, began);
  const baseline = (await failureRatesBetween(db, tenantId, began, new Date(context.baselineEnd))).find(
    (r) => r.modelVersion === base.id,
  );
  const after = (await failureRatesBetween(db, tenantId, measureFrom)).find(
    (r) => r.modelVersion === production.id,
  );
  const versions = versionRates(
    versionsNow.filter((v) => v.id === base.id || v.id === candidate.id),
    totals,
  );
  const patterns = await patternsBetween(db, tenantId, totals, base.id, production.id);
  const newModelServed = production.id !== base.id;
  // with the base still serving, its whole-demo rate is the best estimate of both (two windows differ by chance)
  const baseWhole = versions.find((v) => v.id === base.id)?.failureRate ?? null;
  const baseRate = newModelServed ? (baseline?.failureRate ?? null) : baseWhole;
  const finalRate = newModelServed ? (after?.failureRate ?? null) : baseWhole;
  const patternsWorse = patterns.filter((p) => p.verdict === "worse").length;
  const { targetMet, verdict } = demoVerdict({
    baseRate,
    finalRate,
    patternsWorse,
    newModelServed,
    candidateStatus: versions.find((v) => v.id === candidate.id)?.status ?? "unknown",
    shortfall: context.warmup ? warmupShortfall(context.warmup, options.minutes) : null,
  });
  const [validation] = await listValidations(db, tenantId, candidate.id);
  const deployments = await listDeployments(db, tenantId);
  const timelineBucketS = Math.max(5, Math.round(options.minutes * 3));
  return {
    startedAt: began.toISOString(),
    wallS: progress.elapsed(),
    budgetS: progress.budgetMs / 1000,
    seed: options.seed,
    baseFailureRate: baseRate,
    finalFailureRate: finalRate,
    finalVersion: production.name,
    newModelServed,
    targetMet,
    verdict,
    versions,
    patterns,
    patternsFixed: patterns.filter((p) => p.verdict === "fixed").length,
    patternsWorse,
    ndr: validation?.report.scores.ndr ?? null,
    rollbacks: deployments.filter((d) => d.status === "rolled_back").length,
    validation: validation
      ? {
          decision: validation.decision,
          reasons: validation.report.reasons,
          gatesWhy: context.gatesWhy,
          report: validation.report,
        }
      : null,
    deployments: deployments.map((d) => ({
      id: d.id,
      status: d.status,
      stage: d.stage,
      share: d.share,
      lastStep: d.lastStep,
    })),
    warmup: context.warmup,
    training: candidate.training,
    timeline: (await failureRatesOverTime(db, tenantId, began, timelineBucketS)).map((p) => ({
      ...p,
      modelVersion: context.names.get(p.modelVersion) ?? p.modelVersion,
    })),
    timelineBucketS,
    phases: progress.phases,
    datasets: context.datasets,
    notes: progress.notes,
  };
}
