import type { Recipe } from "../recipe/index.ts";
import type { EvalFields } from "./held-out-evaluation.ts";
import type { StepRecord } from "./run-types.ts";
import type { TrainedStep } from "./strategies/objective.ts";

/** Step 0's record: the starting model's held-out evaluation, nothing trained. */
export function startRecord(algorithm: Recipe["trainer"]["algorithm"], evaluation?: EvalFields): StepRecord {
  const { evalExtra, ...ev } = evaluation ?? {};
  return {
    step: 0,
    algorithm,
    loss: null,
    reward: null,
    accuracy: null,
    advantageMean: null,
    advantageStd: null,
    used: 0,
    skipped: 0,
    gradNorm: null,
    learningRate: null,
    tokens: 0,
    tokensPerSecond: 0,
    staleness: 0,
    generatorStep: 0,
    ...ev,
    elapsedS: 0,
    extra: evalExtra ?? {},
  };
}

/** What the loop adds to a trained step's record. */
export interface StepTiming {
  /** The held-out evaluation after the step, when one ran. */
  evaluation?: EvalFields;
  /** Figures every record carries (a judge reward's spending so far). */
  extra: Record<string, number>;
  /** Run seconds so far, this step's included. */
  elapsedS: number;
  /** Seconds this step took to sample and train. */
  seconds: number;
}

/** A trained step's full record: its figures, the run's, its evaluation's and its timing. */
export function stepRecord(trained: TrainedStep, timing: StepTiming): StepRecord {
  const { evalExtra, ...ev } = timing.evaluation ?? {};
  return {
    ...trained,
    extra: { ...trained.extra, ...timing.extra, ...evalExtra },
    ...ev,
    elapsedS: timing.elapsedS,
    tokensPerSecond: trained.tokens / timing.seconds,
  };
}
