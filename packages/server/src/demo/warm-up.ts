import { rmSync } from "node:fs";
import { join } from "node:path";
import { wilsonInterval } from "@arc/core";
import { RunDir, type StepRecord } from "@arc/rl";
import type { DemoOptions } from "./demo-options.ts";
import { TRAIN_THREADS } from "./demo-plan.ts";
import type { LiveLine } from "./demo-progress.ts";
import { type TrainOutcome, trainCandidate } from "./train-candidate.ts";

export const SFT_RECIPE = "recipes/toolcall-sft.yaml";
/**
 * Steps of the probe that times a warm-up step before the warm-up is planned, and the first one timed: the first
 * few steps are slower than the rest.
 */
const PROBE_STEPS = 20;
const PROBE_TIMED_FROM = 6;
/**
 * Share of the warm-up's time its planned steps may fill; the rest covers starting the run and its held-out
 * evaluations (128 tasks every 100 steps take about a sixth of a step's time on average).
 */
const WARMUP_PLAN_MARGIN = 0.85;
/** Steps between the warm-up's held-out evaluations; each writes a checkpoint, so the one judged is the one handed on. */
const WARMUP_EVAL_EVERY = 100;
/**
 * Held-out production tasks judged at each evaluation: at 128, a rate of 0.05 has a 95% Wilson upper bound of
 * about 0.10, so a warm-up that halves a base rate near 0.2 can show it.
 */
const WARMUP_EVAL_COUNT = 128;

/**
 * The warm-up's overrides of the SFT recipe: 1e-3 decayed along a cosine to 1e-5 by its last planned step (a decay
 * to the end beat a constant rate: 0.104-0.133 against 0.145-0.158 on 512 held-out production tasks, base 0.221).
 */
function warmupTrainer(steps: number): string[] {
  return [
    "trainer.learningRate=0.001",
    "trainer.warmupSteps=5",
    `trainer.decaySteps=${Math.max(1, steps - 5)}`,
    "trainer.minLearningRate=0.00001",
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
  records: StepRecord[];
}

/** The 95% Wilson upper bound of a held-out failure rate judged on `tasks` tasks. */
function heldOutUpperBound(failureRate: number, tasks: number): number {
  return wilsonInterval(Math.round(failureRate * tasks), tasks).upper;
}

/**
 * Seconds one warm-up step takes on this machine now (traffic included): a short run of the warm-up's recipe,
 * timed from step `PROBE_TIMED_FROM` on, then removed. Null when the deadline stopped it before its last step.
 */
async function timeWarmupStep(
  runsDir: string,
  overrides: string[],
  deadline: number,
): Promise<number | null> {
  const probe = await trainCandidate({
    recipe: SFT_RECIPE,
    runsDir,
    runId: `demo-sft-probe-${Date.now().toString(36)}`,
    overrides: [
      ...overrides,
      `trainer.steps=${PROBE_STEPS}`,
      `trainer.checkpointEvery=${PROBE_STEPS}`,
      "data.evalCount=0",
    ],
    deadline,
    onStep: () => undefined,
  });
  rmSync(probe.dir, { recursive: true, force: true });
  const at = (step: number) => probe.records.find((r) => r.step === step)?.elapsedS;
  const [from, to] = [at(PROBE_TIMED_FROM), at(PROBE_STEPS)];
  if (from === undefined || to === undefined || !(to > from)) return null;
  return (to - from) / (PROBE_STEPS - PROBE_TIMED_FROM);
}

/**
 * The SFT warm-up run, from the base model on the warm-up pool's reference answers. A probe's pace plans its
 * learning-rate schedule to end by the deadline (`options.sftSteps` at most); the run judges a held-out set every
 * `WARMUP_EVAL_EVERY` steps and stops at the first judgement whose 95% Wilson upper bound is at most `heldOutTarget`,
 * handing on that step's checkpoint, or at the end of its plan or its deadline, whichever comes first.
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
}): Promise<{ outcome: TrainOutcome; checkpoint: string | null; report: WarmupReport }> {
  const { options } = context;
  const runsDir = join(context.home, "runs");
  const warmupStarted = Date.now();
  const common = [
    `model.path=${context.baseModel}`,
    `data.prompts=${context.poolPath}`,
    `data.seed=${options.seed}`,
  ];
  context.live.update(context.progress("SFT warm-up: timing a few steps to plan the run"));
  const probeStarted = Date.now();
  const stepS = await timeWarmupStep(
    runsDir,
    [...common, ...warmupTrainer(PROBE_STEPS), ...(options.extraOverrides ?? [])],
    context.deadline,
  );
  const fits =
    stepS === null
      ? options.sftSteps
      : Math.floor((WARMUP_PLAN_MARGIN * (context.deadline - Date.now())) / 1000 / stepS);
  const steps = Math.max(1, Math.min(options.sftSteps, fits));
  const evalEvery = Math.min(WARMUP_EVAL_EVERY, steps);
  const target = context.heldOutTarget;
  const plan =
    stepS === null
      ? `${steps} steps (the probe could not time a step)`
      : `${steps} step${steps === 1 ? "" : "s"}: a step took ${stepS.toFixed(2)} s in a ${((Date.now() - probeStarted) / 1000).toFixed(0)} s probe${fits < options.sftSteps ? "" : ` (--sft-steps ${options.sftSteps} caps it)`}`;
  const overrides = [
    ...common,
    `data.evalCount=${WARMUP_EVAL_COUNT}`,
    `trainer.steps=${steps}`,
    `trainer.evalEvery=${evalEvery}`,
    `trainer.checkpointEvery=${evalEvery}`,
    ...warmupTrainer(steps),
    ...(options.extraOverrides ?? []),
  ];
  // the run's held-out size: the last `data.evalCount` override wins, as in `arc train`
  const evalCount = Number(
    [...overrides]
      .reverse()
      .find((o) => o.startsWith("data.evalCount="))
      ?.slice("data.evalCount=".length) ?? WARMUP_EVAL_COUNT,
  );
  const stopRule =
    target === null
      ? ""
      : `; it stops sooner once the held-out failure rate's 95% upper bound is at most ${target.toFixed(3)} (judged every ${evalEvery} steps on ${evalCount} tasks)`;
  options.out.write(`  SFT warm-up: ${plan}${stopRule}\n`);
  const started = Date.now();
  let targetReachedAtStep: number | null = null;
  const runId = `demo-sft-${options.seed}-${Date.now().toString(36)}`;
  const outcome = await trainCandidate({
    recipe: SFT_RECIPE,
    runsDir,
    runId,
    overrides,
    deadline: context.deadline,
    // judged in the run between chunks of `evalEvery` steps, each chunk ending in a checkpoint: the weights judged
    // are the weights handed on, whichever step the stop signal reaches the run at
    stopAfter: (r) => {
      const reached =
        target !== null &&
        r.step > 0 &&
        r.evalFailureRate !== undefined &&
        heldOutUpperBound(r.evalFailureRate, evalCount) <= target;
      if (reached && targetReachedAtStep === null) targetReachedAtStep = r.step;
      return reached;
    },
    onStep: (r, state) => {
      const perStep = r.step > 0 ? (Date.now() - started) / 1000 / r.step : 0;
      const eta = Math.max(
        0,
        Math.min((context.deadline - Date.now()) / 1000, perStep * ((state?.totalSteps ?? 0) - r.step)),
      );
      context.live.update(
        context.progress(
          `SFT warm-up step ${r.step}/${state?.totalSteps ?? "?"} loss ${r.loss?.toFixed(3) ?? "–"}${r.evalFailureRate !== undefined ? ` held-out failure ${r.evalFailureRate.toFixed(2)}` : ""} ETA ${eta.toFixed(0)} s`,
        ),
      );
    },
  });
  const reachedAt = targetReachedAtStep as number | null;
  const checkpoint =
    reachedAt !== null
      ? join(outcome.dir, new RunDir(outcome.dir).checkpoint(reachedAt))
      : outcome.checkpoint;
  const stepped = outcome.records.filter((r) => r.step > 0);
  const last = stepped.at(-1);
  const tokens = stepped.reduce((s, r) => s + r.tokens, 0);
  const heldOut = outcome.records.filter((r) => r.evalFailureRate !== undefined).at(-1)?.evalFailureRate;
  return {
    outcome,
    checkpoint,
    report: {
      runId,
      steps: outcome.state.step,
      plannedSteps: steps,
      maxSteps: options.sftSteps,
      secondsPerStep: last && last.elapsedS > 0 ? last.elapsedS / last.step : (stepS ?? null),
      tokensPerSecond: last && last.elapsedS > 0 ? tokens / last.elapsedS : null,
      heldOutTarget: target,
      budgetS: (context.deadline - warmupStarted) / 1000,
      targetReachedAtStep: reachedAt,
      heldOutFailureRate: heldOut ?? null,
      heldOutUpperBound: heldOut === undefined ? null : heldOutUpperBound(heldOut, evalCount),
      stoppedAtDeadline: outcome.stoppedAtDeadline,
      records: outcome.records,
    },
  };
}
