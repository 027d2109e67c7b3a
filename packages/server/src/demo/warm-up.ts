import { rmSync } from "node:fs";
import { join } from "node:path";
import { wilsonInterval } from "@arc/core";
import { overridesForAlgorithm, RunDir, type StepRecord } from "@arc/rl";
import type { DemoOptions } from "./demo-options.ts";
import { TRAIN_THREADS } from "./demo-plan.ts";
import type { LiveLine } from "./demo-progress.ts";
import { type DemoRunLineage, trainAsRun } from "./demo-runs.ts";
import { type TrainOutcome, trainCandidate } from "./train-candidate.ts";

export const SFT_RECIPE = "recipes/toolcall-sft.yaml";
/**
 * Steps of the probe that times a warm-up step before the warm-up is planned, and the first one timed: the first
 * few steps are slower than the rest.
 */
const PROBE_STEPS = 20;
const PROBE_TIMED_FROM = 6;
/** Share of the warm-up's time its planned steps may fill; the rest covers starting the run and the probe's error. */
const WARMUP_PLAN_MARGIN = 0.9;
/** Steps between the warm-up's held-out evaluations; each writes a checkpoint, so the one judged is the one handed on. */
const WARMUP_EVAL_EVERY = 200;
/**
 * The first step after the start that the warm-up judges: on the demo's pool the held-out target is reached after
 * 800-1,200 steps, and no judgement at step 200 or 400 has reached it, so judging sooner spends on judgements the
 * time a busy machine needs for steps.
 */
const WARMUP_FIRST_JUDGEMENT = 600;
/**
 * Held-out production tasks judged at each evaluation: at 256, a rate of 0.05 has a 95% Wilson upper bound of
 * about 0.08, so the warm-up stops early only once it has surely halved a base rate near 0.2.
 */
const WARMUP_EVAL_COUNT = 256;
/** Held-out tasks the probe judges to time a judgement; a judgement's time grows with its tasks. */
const PROBE_EVAL_COUNT = 64;

/** Peak learning rate of the warm-up. */
const WARMUP_LEARNING_RATE = 0.001;
/** Where its cosine decay ends. */
const WARMUP_MIN_LEARNING_RATE = 0.00001;
/** Steps of linear warm-up at the start of the run, and of a re-planned part (whose optimizer starts afresh). */
const WARMUP_RAMP_STEPS = 5;
const REPLAN_RAMP_STEPS = 10;
/** Re-plans at most: a machine that keeps slowing down runs its last plan to the deadline. */
const MAX_REPLANS = 3;

/**
 * The warm-up's overrides of the SFT recipe: `from` (1e-3 at the start) decayed along a cosine to 1e-5 by its last
 * planned step (a decay to the end beat a constant rate: 0.104-0.133 against 0.145-0.158 on 512 held-out production
 * tasks, base 0.221).
 */
function warmupTrainer(steps: number, from: number, ramp: number): string[] {
  return [
    `trainer.learningRate=${from}`,
    `trainer.warmupSteps=${Math.min(ramp, steps)}`,
    `trainer.decaySteps=${Math.max(1, steps - ramp)}`,
    `trainer.minLearningRate=${WARMUP_MIN_LEARNING_RATE}`,
    `trainer.trainThreads=${TRAIN_THREADS}`,
    "data.guidedFraction=0",
  ];
}

/** How the warm-up went against its plan and its target, for the summary and the advice when the demo misses. */
export interface WarmupReport {
  runId: string;
  steps: number;
  /** Steps its learning-rate schedule was planned for (what the probe said fits, `--sft-steps` at most). */
  plannedSteps: number;
  /** `--sft-steps`: the most it may take. */
  maxSteps: number;
  /** Seconds a step took in this run (traffic included), and training tokens per second; null before a step. */
  secondsPerStep: number | null;
  tokensPerSecond: number | null;
  /** The held-out failure rate it stops at (the demo's target); null when the base rate was not measured. */
  heldOutTarget: number | null;
  /** Seconds the warm-up had, its probe included. */
  budgetS: number;
  /** The step whose held-out upper bound reached the target (its checkpoint is handed on); null when none did. */
  targetReachedAtStep: number | null;
  /** The last held-out failure rate and its 95% Wilson upper bound. */
  heldOutFailureRate: number | null;
  heldOutUpperBound: number | null;
  stoppedAtDeadline: boolean;
  /**
   * Where the machine slowed down so much that the plan would have been cut: at that checkpoint the warm-up went on
   * from it with a new plan (its learning rate decayed from where it was, over the steps that now fit).
   */
  replans: { atStep: number; secondsPerStep: number; plannedSteps: number }[];
  /** Every part's step records, numbered as one run. */
  records: StepRecord[];
}

/** The 95% Wilson upper bound of a held-out failure rate judged on `tasks` tasks. */
function heldOutUpperBound(failureRate: number, tasks: number): number {
  return wilsonInterval(Math.round(failureRate * tasks), tasks).upper;
}

/** A warm-up's pace on this machine now (traffic included): seconds a step and seconds a held-out judgement. */
export interface ProbedPace {
  stepS: number;
  judgementS: number;
}

/**
 * Times a warm-up step and a held-out judgement's task on this machine now: a short run of the warm-up's recipe
 * that judges `PROBE_EVAL_COUNT` tasks at its start and times its steps from `PROBE_TIMED_FROM` on, then is
 * removed. Null when the deadline stopped it before its last step.
 */
async function probeWarmup(
  runsDir: string,
  overrides: string[],
  deadline: number,
): Promise<{ stepS: number; secondsPerJudgedTask: number } | null> {
  const probe = await trainCandidate({
    recipe: SFT_RECIPE,
    runsDir,
    runId: `demo-sft-probe-${Date.now().toString(36)}`,
    overrides: [
      ...overrides,
      `trainer.steps=${PROBE_STEPS}`,
      `trainer.checkpointEvery=${PROBE_STEPS}`,
      `trainer.evalEvery=${PROBE_STEPS}`,
      `data.evalCount=${PROBE_EVAL_COUNT}`,
    ],
    deadline,
    onStep: () => undefined,
  });
  rmSync(probe.dir, { recursive: true, force: true });
  const at = (step: number) => probe.records.find((r) => r.step === step);
  const [from, to, start] = [at(PROBE_TIMED_FROM), at(PROBE_STEPS), at(0)];
  if (from === undefined || to === undefined || !(to.elapsedS > from.elapsedS)) return null;
  const stepS = (to.elapsedS - from.elapsedS) / (PROBE_STEPS - PROBE_TIMED_FROM);
  const judged = [start?.evalS, to.evalS].filter((s): s is number => s !== undefined);
  return { stepS, secondsPerJudgedTask: judged.length === 0 ? 0 : Math.max(...judged) / PROBE_EVAL_COUNT };
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

/**
 * Judged steps in (`from`, `to`] of a part whose last step is `last`: every `WARMUP_EVAL_EVERY` steps from `first`
 * on, and the last.
 */
export function judgementsBetween(from: number, to: number, last: number, first: number): number {
  const periodic = (upTo: number) =>
    upTo < first ? 0 : Math.floor(upTo / WARMUP_EVAL_EVERY) - Math.ceil(first / WARMUP_EVAL_EVERY) + 1;
  const lastExtra = to >= last && last > from && !(last >= first && last % WARMUP_EVAL_EVERY === 0) ? 1 : 0;
  return periodic(to) - periodic(from) + lastExtra;
}

/**
 * Held-out judgements a part of `steps` makes: at its start, every `WARMUP_EVAL_EVERY` steps from `first` on, and
 * at its last step.
 */
export function judgementsInPlan(steps: number, first = WARMUP_FIRST_JUDGEMENT): number {
  return 1 + judgementsBetween(0, steps, steps, first);
}

/**
 * The longest part, `maxSteps` at most and one step at least, whose steps and judgements (the first at `first`) at
 * `pace` fit in the plan's share of the time to `deadline`.
 */
export function plannedStepsThatFit(
  now: number,
  deadline: number,
  pace: ProbedPace,
  maxSteps: number,
  first = WARMUP_FIRST_JUDGEMENT,
): number {
  const seconds = (WARMUP_PLAN_MARGIN * (deadline - now)) / 1000;
  const takes = (steps: number) => steps * pace.stepS + judgementsInPlan(steps, first) * pace.judgementS;
  let steps = Math.max(1, Math.min(maxSteps, Math.floor(seconds / pace.stepS)));
  while (steps > 1 && takes(steps) > seconds) steps--;
  return steps;
}

/**
 * Seconds by which the rest of a part of `planned` steps (judged from `first` on) would overrun `deadline`, at `step`
 * at `now` and at `pace` from here on; 0 when it ends in time.
 */
export function secondsOver(
  at: { planned: number; step: number; now: number; pace: ProbedPace; first: number },
  deadline: number,
): number {
  const judgements = judgementsBetween(at.step, at.planned, at.planned, at.first);
  const needs = (at.planned - at.step) * at.pace.stepS + judgements * at.pace.judgementS;
  return Math.max(0, needs - (deadline - at.now) / 1000);
}

/** The overrides of one part of the warm-up; the last `data.evalCount` wins, as in `arc train`. */
function warmupPartOverrides(part: {
  options: DemoOptions;
  common: string[];
  from: string;
  steps: number;
  learningRate: number;
  ramp: number;
  /** The first judged step: `WARMUP_FIRST_JUDGEMENT` in the first part, a re-planned one's every `evalEvery`. */
  evalFrom: number;
}): string[] {
  const { steps } = part;
  return [
    `model.path=${part.from}`,
    ...part.common,
    `data.evalCount=${WARMUP_EVAL_COUNT}`,
    `trainer.steps=${steps}`,
    `trainer.evalEvery=${Math.min(WARMUP_EVAL_EVERY, steps)}`,
    `trainer.evalFrom=${Math.min(part.evalFrom, steps)}`,
    `trainer.checkpointEvery=${Math.min(WARMUP_EVAL_EVERY, steps)}`,
    ...warmupTrainer(steps, part.learningRate, part.ramp),
    ...overridesForAlgorithm("sft", part.options.extraOverrides ?? []),
  ];
}

/**
 * Plans the warm-up from a probe of a few steps: how many steps fit by the deadline with their judgements
 * (`options.sftSteps` at most), each judgement's size, and the probe's pace (null when it could not time a step).
 * Writes the plan and its stop rule to the demo's output.
 */
async function planWarmup(
  context: {
    baseModel: string;
    options: DemoOptions;
    deadline: number;
    heldOutTarget: number | null;
    live: LiveLine;
    progress: (line: string) => string;
  },
  runsDir: string,
  common: string[],
  partOverrides: (
    from: string,
    steps: number,
    learningRate: number,
    ramp: number,
    evalFrom: number,
  ) => string[],
): Promise<{ probedPace: ProbedPace | null; plannedSteps: number; evalCount: number }> {
  const { options, deadline } = context;
  context.live.update(context.progress("SFT warm-up: timing a few steps to plan the run"));
  const probeStarted = Date.now();
  const probed = await probeWarmup(
    runsDir,
    [
      `model.path=${context.baseModel}`,
      ...common,
      ...warmupTrainer(PROBE_STEPS, WARMUP_LEARNING_RATE, WARMUP_RAMP_STEPS),
      ...overridesForAlgorithm("sft", options.extraOverrides ?? []),
    ],
    deadline,
  );
  const evalCount = Number(
    partOverrides(context.baseModel, 1, WARMUP_LEARNING_RATE, WARMUP_RAMP_STEPS, WARMUP_FIRST_JUDGEMENT)
      .reverse()
      .find((o) => o.startsWith("data.evalCount="))
      ?.slice("data.evalCount=".length) ?? WARMUP_EVAL_COUNT,
  );
  const probedPace: ProbedPace | null =
    probed === null ? null : { stepS: probed.stepS, judgementS: probed.secondsPerJudgedTask * evalCount };
  const plannedSteps =
    probedPace === null
      ? options.sftSteps
      : plannedStepsThatFit(Date.now(), deadline, probedPace, options.sftSteps);
  const evalEvery = Math.min(WARMUP_EVAL_EVERY, plannedSteps);
  const target = context.heldOutTarget;
  const capped = probedPace !== null && plannedSteps === options.sftSteps;
  const plan =
    probedPace === null
      ? `${plannedSteps} steps (the probe could not time a step)`
      : `${plannedSteps} step${plannedSteps === 1 ? "" : "s"}: a step took ${probedPace.stepS.toFixed(2)} s and a judgement of ${evalCount} tasks ${probedPace.judgementS.toFixed(1)} s in a ${((Date.now() - probeStarted) / 1000).toFixed(0)} s probe${capped ? ` (--sft-steps ${options.sftSteps} caps it)` : ""}`;
  const stopRule =
    target === null
      ? ""
      : `; it stops sooner once the held-out failure rate's 95% upper bound is at most ${target.toFixed(3)} (judged on ${evalCount} tasks at step ${Math.min(WARMUP_FIRST_JUDGEMENT, plannedSteps)}, every ${evalEvery} steps after it and at its end)`;
  options.out.write(`  SFT warm-up: ${plan}${stopRule}\n`);
  return { probedPace, plannedSteps, evalCount };
}

/** The progress line of a warm-up part's steps: the step counted over the whole warm-up, its loss and the ETA. */
function showStep(
  context: { deadline: number; live: LiveLine; progress: (line: string) => string },
  stepPace: PartPace,
  offset: number,
): (r: StepRecord, state: { totalSteps?: number } | null) => void {
  const { deadline } = context;
  return (r, state) => {
    stepPace.saw(r.step, Date.now());
    const perStep = stepPace.secondsPerStep(r.step, Date.now()) ?? 0;
    const eta = Math.max(
      0,
      Math.min((deadline - Date.now()) / 1000, perStep * ((state?.totalSteps ?? 0) - r.step)),
    );
    context.live.update(
      context.progress(
        `SFT warm-up step ${offset + r.step}/${offset + (state?.totalSteps ?? 0)} loss ${r.loss?.toFixed(3) ?? "–"}${r.evalFailureRate !== undefined ? ` held-out failure ${r.evalFailureRate.toFixed(2)}` : ""} ETA ${eta.toFixed(0)} s`,
      ),
    );
  };
}

/** A part's pace at `step`: its seconds a step so far, and its judgements' slowed down as its steps did since the probe. */
function paceSoFar(
  stepPace: PartPace,
  probedPace: ProbedPace | null,
  step: number,
  now: number,
): ProbedPace | null {
  const stepS = stepPace.secondsPerStep(step, now);
  if (stepS === null) return null;
  const judgementS = probedPace === null ? 0 : (probedPace.judgementS * stepS) / probedPace.stepS;
  return { stepS, judgementS };
}

/**
 * Whether a part should be re-planned at `step`: at one of its checkpoints (a re-plan goes on from one, and every
 * `checkpointEvery` steps has one) before its end, the rest of it would overrun the deadline by more than
 * `WARMUP_EVAL_EVERY` steps' time at its pace so far.
 */
function overrunsPlan(
  step: number,
  planned: number,
  first: number,
  pace: (step: number, now: number) => ProbedPace | null,
  deadline: number,
): boolean {
  if (step === 0 || step >= planned || step % Math.min(WARMUP_EVAL_EVERY, planned) !== 0) return false;
  const now = Date.now();
  const at = pace(step, now);
  return (
    at !== null &&
    secondsOver({ planned, step, now, pace: at, first }, deadline) > WARMUP_EVAL_EVERY * at.stepS
  );
}

/**
 * The records a part keeps: up to its stop step (when it stopped early), without its step 0 after the first part
 * (a re-planned part starts where the last one stopped).
 */
function keptRecords(records: StepRecord[], offset: number, stopStep: number | undefined): StepRecord[] {
  return records.filter(
    (r) => (offset === 0 || r.step > 0) && (stopStep === undefined || r.step <= stopStep),
  );
}

/**
 * Trains one part of the warm-up as a run. It is judged between chunks of `evalEvery` steps, each chunk ending in a
 * checkpoint, so the weights judged are the weights handed on, whichever step the stop signal reaches the run at. It
 * stops at the first judgement that meets the target (`targetAt`), or, while re-plans are left, at a checkpoint where
 * the rest of it would overrun the deadline (`replanAt`); `pace` is its pace as it went.
 */
async function trainPart(
  context: {
    deadline: number;
    live: LiveLine;
    progress: (line: string) => string;
    runs: DemoRunLineage;
  },
  part: {
    id: string;
    runsDir: string;
    overrides: string[];
    steps: number;
    /** Its first judged step. */
    first: number;
    /** Steps of the warm-up before this part. */
    offset: number;
    mayReplan: boolean;
    probedPace: ProbedPace | null;
    reachesTarget: (r: StepRecord) => boolean;
  },
) {
  const { deadline } = context;
  const stepPace = new PartPace();
  const pace = (step: number, now: number) => paceSoFar(stepPace, part.probedPace, step, now);
  let targetAt: StepRecord | null = null;
  let replanAt: StepRecord | null = null;
  const outcome = await trainAsRun(context.runs, {
    recipe: SFT_RECIPE,
    runsDir: part.runsDir,
    runId: part.id,
    overrides: part.overrides,
    deadline,
    stopAfter: (r) => {
      if (part.reachesTarget(r)) {
        targetAt ??= r;
        return true;
      }
      if (!part.mayReplan || !overrunsPlan(r.step, part.steps, part.first, pace, deadline)) return false;
      replanAt ??= r;
      return true;
    },
    onStep: showStep(context, stepPace, part.offset),
  });
  return { outcome, targetAt: targetAt as StepRecord | null, replanAt: replanAt as StepRecord | null, pace };
}

/** Whether a step's held-out judgement (of `evalCount` tasks) has its 95% upper bound at most `target` (null: never). */
function meetsTarget(r: StepRecord, target: number | null, evalCount: number): boolean {
  return (
    target !== null &&
    r.step > 0 &&
    r.evalFailureRate !== undefined &&
    heldOutUpperBound(r.evalFailureRate, evalCount) <= target
  );
}

/**
 * The SFT warm-up, from the base model on the warm-up pool's reference answers. A probe's pace plans its
 * learning-rate schedule to end by the deadline (`options.sftSteps` at most). The run judges a held-out set at its
 * start, at `WARMUP_FIRST_JUDGEMENT`, every `WARMUP_EVAL_EVERY` steps after it and at its end, and stops at the first
 * judgement whose 95% Wilson upper bound is at most `heldOutTarget`, handing on that step's checkpoint, or at the end
 * of its plan or its deadline, whichever comes first. When a checkpoint (every `WARMUP_EVAL_EVERY` steps) finds the
 * run so slow that the rest of its plan would overrun the deadline by more than that many steps' time (a machine that
 * got busier after the probe), the warm-up goes on from that checkpoint with a plan that fits: the learning rate
 * decays from where it was over the steps left, so the schedule still ends at its floor.
 */
export async function warmUp(context: {
  poolPath: string;
  baseModel: string;
  home: string;
  options: DemoOptions;
  deadline: number;
  /** The held-out failure rate that meets the demo's target; null: no early stop. */
  heldOutTarget: number | null;
  live: LiveLine;
  /** Adds the traffic's state to a progress line. */
  progress: (line: string) => string;
  /** Where each part of the warm-up is recorded as a run, and what it trains on. */
  runs: DemoRunLineage;
}): Promise<{ outcome: TrainOutcome; checkpoint: string | null; report: WarmupReport }> {
  const { options, deadline } = context;
  const runsDir = join(context.home, "runs");
  const warmupStarted = Date.now();
  const common = [`data.prompts=${context.poolPath}`, `data.seed=${options.seed}`];
  const partOverrides = (from: string, steps: number, learningRate: number, ramp: number, evalFrom: number) =>
    warmupPartOverrides({ options, common, from, steps, learningRate, ramp, evalFrom });
  const { probedPace, plannedSteps, evalCount } = await planWarmup(context, runsDir, common, partOverrides);
  const target = context.heldOutTarget;
  const reachesTarget = (r: StepRecord) => meetsTarget(r, target, evalCount);

  const runId = `demo-sft-${options.seed}-${Date.now().toString(36)}`;
  const records: StepRecord[] = [];
  const replans: WarmupReport["replans"] = [];
  let part = { from: context.baseModel, steps: plannedSteps, learningRate: WARMUP_LEARNING_RATE };
  let offset = 0;
  let targetReachedAtStep: number | null = null;
  let handedOn: string | null = null;
  /** Training seconds (evaluations excluded) and tokens of the steps kept. */
  let trainSeconds = 0;
  let tokens = 0;
  let outcome: TrainOutcome;
  for (;;) {
    const first = replans.length === 0 ? WARMUP_FIRST_JUDGEMENT : WARMUP_EVAL_EVERY;
    const ramp = replans.length === 0 ? WARMUP_RAMP_STEPS : REPLAN_RAMP_STEPS;
    const run = await trainPart(context, {
      id: replans.length === 0 ? runId : `${runId}-part${replans.length + 1}`,
      runsDir,
      overrides: partOverrides(part.from, part.steps, part.learningRate, ramp, first),
      steps: part.steps,
      first,
      offset,
      mayReplan: replans.length < MAX_REPLANS,
      probedPace,
      reachesTarget,
    });
    outcome = run.outcome;
    if (run.targetAt) targetReachedAtStep = offset + run.targetAt.step;
    const stopStep = (run.targetAt ?? run.replanAt)?.step;
    const kept = keptRecords(outcome.records, offset, stopStep);
    records.push(...kept.map((r) => ({ ...r, step: offset + r.step })));
    trainSeconds += kept.filter((r) => r.step > 0).at(-1)?.elapsedS ?? 0;
    tokens += kept.reduce((sum, r) => sum + (r.step > 0 ? r.tokens : 0), 0);
    const checkpointAt = (step: number) => join(outcome.dir, new RunDir(outcome.dir).checkpoint(step));
    if (targetReachedAtStep !== null) {
      handedOn = checkpointAt(targetReachedAtStep - offset);
      break;
    }
    const at = run.replanAt;
    if (at === null) {
      handedOn = outcome.checkpoint;
      break;
    }
    const pace = run.pace(at.step, Date.now()) as ProbedPace;
    const secondsPerStep = pace.stepS;
    const steps = plannedStepsThatFit(Date.now(), deadline, pace, part.steps - at.step, WARMUP_EVAL_EVERY);
    offset += at.step;
    replans.push({ atStep: offset, secondsPerStep, plannedSteps: offset + steps });
    options.out.write(
      `  SFT warm-up: at step ${offset} a step takes ${secondsPerStep.toFixed(2)} s, so the plan would not end by the deadline; it goes on from that checkpoint for ${steps} more steps\n`,
    );
    part = { from: checkpointAt(at.step), steps, learningRate: at.learningRate ?? part.learningRate };
  }
  const stepsDone = records.at(-1)?.step ?? 0;
  const heldOut = records.filter((r) => r.evalFailureRate !== undefined).at(-1)?.evalFailureRate;
  const report: WarmupReport = {
    runId: outcome.runId,
    steps: stepsDone,
    plannedSteps,
    maxSteps: options.sftSteps,
    secondsPerStep:
      stepsDone > 0 && trainSeconds > 0 ? trainSeconds / stepsDone : (probedPace?.stepS ?? null),
    tokensPerSecond: trainSeconds > 0 ? tokens / trainSeconds : null,
    heldOutTarget: target,
    budgetS: (deadline - warmupStarted) / 1000,
    targetReachedAtStep,
    heldOutFailureRate: heldOut ?? null,
    heldOutUpperBound: heldOut === undefined ? null : heldOutUpperBound(heldOut, evalCount),
    stoppedAtDeadline: outcome.stoppedAtDeadline,
    replans,
    records,
  };
  return { outcome, checkpoint: handedOn, report };
}
