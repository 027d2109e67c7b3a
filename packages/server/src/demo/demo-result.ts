import type { ValidationReport } from "@arc/core";
import type { StepRecord, WarmUpReport } from "@arc/rl";
import type { RatePoint } from "../failures/index.ts";
import type { DemoPhase } from "./demo-progress.ts";
import { type DemoPattern, PATTERN_VERDICT_RULE } from "./pattern-verdicts.ts";

/** One model version as the demo saw it serve. */
export interface DemoVersion {
  id: string;
  name: string;
  status: string;
  /** Judged gateway calls it answered during the whole demo, and how many failed. */
  n: number;
  failures: number;
  failureRate: number | null;
}

/** Everything `arc demo` measured: what the summary, the table and the report are made of. */
export interface DemoResult {
  startedAt: string;
  wallS: number;
  budgetS: number;
  seed: number;
  /** Live failure rate before training; with no new model in production, the base model's over the whole demo. */
  baseFailureRate: number | null;
  /**
   * Live failure rate of the model in production at the end, measured after the last deployment decision; with no
   * new model in production, the base model's over the whole demo (the same figure as `baseFailureRate`).
   */
  finalFailureRate: number | null;
  finalVersion: string;
  /** Whether a model other than the base was in production (promoted) at the end. */
  newModelServed: boolean;
  targetMet: boolean;
  /** One honest sentence on the target (halve the failure rate, no pattern worse). */
  verdict: string;
  versions: DemoVersion[];
  patterns: DemoPattern[];
  patternsFixed: number;
  patternsWorse: number;
  ndr: number | null;
  rollbacks: number;
  validation: {
    decision: string;
    reasons: string[];
    gatesWhy: string;
    report: ValidationReport;
  } | null;
  deployments: { id: string; status: string; stage: number; share: number; lastStep: unknown }[];
  /** The SFT warm-up run the DPO run started from (null when the demo ran none). */
  warmup: WarmUpReport | null;
  training: {
    runId: string;
    steps: number;
    stoppedAtDeadline: boolean;
    records: StepRecord[];
    /** Share of DPO groups that gave a pair (a prompt with a better and a worse sample). */
    pairRate: number | null;
  } | null;
  timeline: RatePoint[];
  timelineBucketS: number;
  phases: DemoPhase[];
  datasets: { id: string; kind: string; rows: number }[];
  notes: string[];
}

/** What the demo's verdict is drawn from. */
export interface VerdictInputs {
  /** Live failure rate before training (with no new model in production, the base model's over the whole demo). */
  baseRate: number | null;
  /** Live failure rate of the production model at the end. */
  finalRate: number | null;
  patternsWorse: number;
  /** Whether a model other than the base was in production (promoted) at the end. */
  newModelServed: boolean;
  /** Where the candidate ended (`rejected`, `rolled_back`, `validated`, ...). */
  candidateStatus: string;
  /** Why the training fell short and what to do, said when the target is not met; null when nothing is known. */
  shortfall?: string | null;
}

/**
 * The demo's target (halve the live failure rate with no pattern worse) and one honest sentence on it. With no
 * new model in production there is nothing to compare: two windows of the same model differ only by chance.
 */
export function demoVerdict(inputs: VerdictInputs): { targetMet: boolean; verdict: string } {
  const { baseRate, finalRate, patternsWorse } = inputs;
  const why = inputs.shortfall ? `. Why: ${inputs.shortfall}` : "";
  if (!inputs.newModelServed)
    return {
      targetMet: false,
      verdict: `no new model in production: the candidate ended ${inputs.candidateStatus}, so production stayed on the base model${baseRate === null ? "" : ` (live failure rate ${baseRate.toFixed(2)} over the demo)`}: target not met (halve it with no pattern worse)${why}`,
    };
  if (baseRate === null || finalRate === null)
    return { targetMet: false, verdict: `target not measured: too few judged calls${why}` };
  const targetMet = finalRate <= baseRate / 2 && patternsWorse === 0;
  return {
    targetMet,
    verdict: `failure rate ${baseRate.toFixed(2)} → ${finalRate.toFixed(2)}${patternsWorse ? `, ${patternsWorse} pattern(s) worse` : ""}: ${targetMet ? "target met (at least halved, no pattern worse)" : `target not met (halve it with no pattern worse)${why}`}`,
  };
}

/** Seconds the demo's training phases took (the SFT warm-up, DPO, LoRA), from their start to their end. */
function trainingSeconds(phases: readonly DemoPhase[]): number {
  return phases
    .filter((p) => p.name === "SFT warm-up" || p.name.startsWith("train"))
    .reduce((sum, p) => sum + p.endS - p.startS, 0);
}

/** The figures file `.arc/demo/summary.json`, exactly these keys. */
export function summaryJson(result: DemoResult): Record<string, unknown> {
  return {
    base_failure_rate: result.baseFailureRate,
    final_failure_rate: result.finalFailureRate,
    patterns_fixed: result.patternsFixed,
    patterns_worse: result.patternsWorse,
    ndr: result.ndr,
    general_ndr: result.validation?.report.scores.general?.ndr ?? null,
    wall_s: Math.round(result.wallS * 10) / 10,
    train_s: Math.round(trainingSeconds(result.phases) * 10) / 10,
    rollbacks: result.rollbacks,
    warmup_steps: result.warmup?.steps ?? null,
    warmup_planned_steps: result.warmup?.plannedSteps ?? null,
    warmup_replans: result.warmup?.replans.length ?? null,
    warmup_seconds_per_step: result.warmup?.secondsPerStep ?? null,
    versions: result.versions.map((v) => ({
      id: v.id,
      name: v.name,
      status: v.status,
      n: v.n,
      failure_rate: v.failureRate,
    })),
  };
}

function pct(v: number | null): string {
  return v === null ? "–" : v.toFixed(3);
}

/** The summary table printed at the end. */
export function summaryTable(result: DemoResult): string {
  const rows = [
    ["model version", "status", "judged calls", "failure rate"],
    ...result.versions.map((v) => [v.name, v.status, String(v.n), pct(v.failureRate)]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join("  ");
  return [
    line(rows[0]),
    ...rows.slice(1).map(line),
    "",
    result.newModelServed
      ? `failure rate (production model, live): ${pct(result.baseFailureRate)} → ${pct(result.finalFailureRate)} (${result.finalVersion})`
      : `failure rate (production model, live): ${pct(result.finalFailureRate)} (${result.finalVersion}, unchanged: no new model in production)`,
    `patterns fixed: ${result.patternsFixed}, worse: ${result.patternsWorse} (of ${result.patterns.length})`,
    `  ${PATTERN_VERDICT_RULE}`,
    `NDR: ${pct(result.ndr)}   rollbacks: ${result.rollbacks}   time: ${result.wallS.toFixed(0)} s`,
    result.verdict,
  ].join("\n");
}
