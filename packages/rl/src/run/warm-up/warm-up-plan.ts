import { wilsonInterval } from "@arc/core";
import type { StepRecord } from "../run-types.ts";

/** Share of the time left that a plan's steps and judgements may fill; the rest covers starting a run and the pace's error. */
const PLAN_MARGIN = 0.9;

/** A warm-up's pace on this machine now (other work included): seconds a step and seconds a held-out judgement. */
export interface Pace {
  stepS: number;
  judgementS: number;
}

/** When a part judges its held-out tasks: every `every` steps from `first` on, and at its last step. */
export interface JudgementSchedule {
  every: number;
  first: number;
}

/** Judged steps in (`from`, `to`] of a part whose last step is `last`. */
export function judgementsBetween(from: number, to: number, last: number, when: JudgementSchedule): number {
  const { every, first } = when;
  const periodic = (upTo: number) =>
    upTo < first ? 0 : Math.floor(upTo / every) - Math.ceil(first / every) + 1;
  const lastExtra = to >= last && last > from && !(last >= first && last % every === 0) ? 1 : 0;
  return periodic(to) - periodic(from) + lastExtra;
}

/** Held-out judgements a part of `steps` makes: at its start, on its schedule, and at its last step. */
export function judgementsInPlan(steps: number, when: JudgementSchedule): number {
  return 1 + judgementsBetween(0, steps, steps, when);
}

/**
 * The longest part, `maxSteps` at most and one step at least, whose steps and judgements at `pace` fit in the plan's
 * share of the time from `now` to `deadline`.
 */
export function plannedStepsThatFit(
  now: number,
  deadline: number,
  pace: Pace,
  maxSteps: number,
  when: JudgementSchedule,
): number {
  const seconds = (PLAN_MARGIN * (deadline - now)) / 1000;
  const takes = (steps: number) => steps * pace.stepS + judgementsInPlan(steps, when) * pace.judgementS;
  let steps = Math.max(1, Math.min(maxSteps, Math.floor(seconds / pace.stepS)));
  while (steps > 1 && takes(steps) > seconds) steps--;
  return steps;
}

/**
 * Seconds by which the rest of a part of `planned` steps would overrun `deadline`, at `step` at `now` and at `pace`
 * from here on; 0 when it ends in time.
 */
export function secondsOver(
  at: { planned: number; step: number; now: number; pace: Pace; when: JudgementSchedule },
  deadline: number,
): number {
  const judgements = judgementsBetween(at.step, at.planned, at.planned, at.when);
  const needs = (at.planned - at.step) * at.pace.stepS + judgements * at.pace.judgementS;
  return Math.max(0, needs - (deadline - at.now) / 1000);
}

/**
 * A run's pace from its first step on: seconds a step, its judgements and checkpoints included, its start-up (the
 * process, the model, the judgement at step 0) left out, so that it reads the rate the rest of the plan goes at.
 */
export class PartPace {
  private first: { step: number; at: number } | null = null;

  /** Notes a step record as it arrives. */
  saw(step: number, at: number): void {
    if (step > 0 && this.first === null) this.first = { step, at };
  }

  /** Seconds a step between the first step seen and `step` at `now`; null before two steps apart were seen. */
  secondsPerStep(step: number, now: number): number | null {
    if (this.first === null || step <= this.first.step) return null;
    return (now - this.first.at) / 1000 / (step - this.first.step);
  }
}

/** The 95% Wilson upper bound of a held-out failure rate judged on `tasks` tasks. */
export function heldOutUpperBound(failureRate: number, tasks: number): number {
  return wilsonInterval(Math.round(failureRate * tasks), tasks).upper;
}

/** Whether a step's held-out judgement (of `evalCount` tasks) has its 95% upper bound at most `target` (null: never). */
export function meetsTarget(r: StepRecord, target: number | null, evalCount: number): boolean {
  return (
    target !== null &&
    r.step > 0 &&
    r.evalFailureRate !== undefined &&
    heldOutUpperBound(r.evalFailureRate, evalCount) <= target
  );
}
