import type { StepRecord } from "../run-types.ts";

/** One SFT run of a planned warm-up (a part of it, or the probe that times it), for a runner to train. */
export interface WarmUpPart {
  /** `probe`: the short run that times a step and a judgement, removed after; `part`: a part of the warm-up. */
  kind: "probe" | "part";
  runId: string;
  /** The checkpoint it starts from. */
  from: string;
  steps: number;
  /** Its schedule: the peak rate, the linear ramp, then a cosine over `decaySteps` to `minLearningRate` (0: constant). */
  learningRate: number;
  warmupSteps: number;
  decaySteps: number;
  minLearningRate: number;
  /** Held-out tasks a judgement draws, and the judged steps: its start, every `evalEvery` from `evalFrom`, its last. */
  evalCount: number;
  evalEvery: number;
  evalFrom: number;
  checkpointEvery: number;
  /** It stops at this time (ms since the epoch), once it has a step to hand on. */
  deadline: number;
  /** Ends the run after this record's step, its checkpoint written, when it returns true. */
  stopAfter(record: StepRecord): boolean;
  onStep(record: StepRecord): void;
}

/** How a part's run ended. */
export interface WarmUpPartOutcome {
  runId: string;
  dir: string;
  records: StepRecord[];
  /** Its last checkpoint (absolute); null when it wrote none. */
  checkpoint: string | null;
  /** Its checkpoint of step `step` (absolute). */
  checkpointAt(step: number): string;
  stoppedAtDeadline: boolean;
}

/** Trains one run of a planned warm-up as an SFT run of the warm-up's recipe. */
export type WarmUpPartRunner = (part: WarmUpPart) => Promise<WarmUpPartOutcome>;

/** How a planned warm-up went against its plan and its target. */
export interface WarmUpReport {
  /** Its last part's run. */
  runId: string;
  steps: number;
  /** Steps its first plan fitted in the budget (`steps` of the block at most). */
  plannedSteps: number;
  /** The block's `steps`: the most it may take. */
  maxSteps: number;
  /** Seconds a step took (judgements excluded), and training tokens per second; null before a step. */
  secondsPerStep: number | null;
  tokensPerSecond: number | null;
  /** The held-out failure rate it stops at; null without a stop rule. */
  heldOutTarget: number | null;
  /** Seconds it had, its probe included. */
  budgetS: number;
  /** The step whose held-out upper bound reached the target (its checkpoint is handed on); null when none did. */
  targetReachedAtStep: number | null;
  /** The last held-out failure rate and its 95% Wilson upper bound. */
  heldOutFailureRate: number | null;
  heldOutUpperBound: number | null;
  stoppedAtDeadline: boolean;
  /** Where the machine slowed down so much that the rest of a part would have overrun: it went on with a new plan. */
  replans: { atStep: number; secondsPerStep: number; plannedSteps: number }[];
  /** Every part's step records, numbered as one run. */
  records: StepRecord[];
}

/** What a planned warm-up needs besides its block. */
export interface PlannedWarmUpContext {
  /** The model it starts from. */
  from: string;
  /** Its first part's run id; later parts add `-part<n>`, the probe `-probe`. */
  runId: string;
  /** When it must end (ms since the epoch; Infinity: no budget). */
  deadline: number;
  /** Held-out tasks judged at its start and end when the block has no stop rule. */
  evalCount: number;
  runPart: WarmUpPartRunner;
  /** What the plan calls the most steps it may take (default `sftWarmUp.steps`). */
  stepsName?: string;
  /** Each line that states the plan or a re-plan. */
  say?(line: string): void;
  /** Every step record, its step counted over the whole warm-up, with the steps planned so far and the pace. */
  onStep?(record: StepRecord, totalSteps: number, secondsPerStep: number | null): void;
}
