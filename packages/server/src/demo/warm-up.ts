import { join } from "node:path";
import {
  overridesForAlgorithm,
  plannedWarmUp,
  RunDir,
  SftWarmUpBlock,
  type StepRecord,
  type WarmUpPart,
  type WarmUpPartRunner,
  type WarmUpReport,
} from "@arc/rl";
import { demoRecipe } from "./demo-family.ts";
import type { DemoOptions } from "./demo-options.ts";
import { TRAIN_THREADS } from "./demo-plan.ts";
import type { LiveLine } from "./demo-progress.ts";
import { type DemoRunLineage, trainAsRun } from "./demo-runs.ts";
import { type TrainOutcome, type TrainRequest, trainCandidate } from "./train-candidate.ts";

/** The SFT recipe each part of the warm-up runs. */
export const SFT_RECIPE = demoRecipe("sft");
/** Examples a warm-up step trains on: the SFT recipe's. */
const WARMUP_PROMPTS_PER_STEP = 16;
/**
 * Held-out production tasks judged at each evaluation: at 256, a rate of 0.05 has a 95% Wilson upper bound of
 * about 0.08, so the warm-up stops early only once it has surely halved a base rate near 0.2.
 */
const WARMUP_EVAL_COUNT = 256;
/**
 * The first step after the start that the warm-up judges: on the demo's pool the held-out target is reached after
 * 800-1,200 steps, and no judgement at step 200 or 400 has reached it, so judging sooner spends on judgements the
 * time a busy machine needs for steps.
 */
const WARMUP_FIRST_JUDGEMENT = 600;

/**
 * The demo's warm-up as the product's planned SFT warm-up: 1e-3 decayed along a cosine to 1e-5 by its last planned
 * step (a decay to the end beat a constant rate: 0.104-0.133 against 0.145-0.158 on 512 held-out production tasks,
 * base 0.221), after a 5-step ramp; planned to `deadline`, `--sft-steps` at most; judged every 200 steps from step
 * 600 on and stopped once the held-out target is surely met. A `data.evalCount` among the demo's overrides sizes its
 * judgements, as in `arc train`.
 */
function demoWarmUpBlock(options: DemoOptions, deadline: number, heldOutTarget: number | null) {
  const evalCount = overridesForAlgorithm("sft", options.extraOverrides ?? [])
    .reverse()
    .find((o) => o.startsWith("data.evalCount="))
    ?.slice("data.evalCount=".length);
  return SftWarmUpBlock.parse({
    steps: options.sftSteps,
    learningRate: 0.001,
    promptsPerStep: WARMUP_PROMPTS_PER_STEP,
    warmupSteps: 5,
    minLearningRate: 0.00001,
    budgetS: Math.max(1, (deadline - Date.now()) / 1000),
    stopAt:
      heldOutTarget === null
        ? undefined
        : {
            failureRate: heldOutTarget,
            evalCount: evalCount === undefined ? WARMUP_EVAL_COUNT : Number(evalCount),
            evalFrom: WARMUP_FIRST_JUDGEMENT,
          },
  });
}

/** The overrides of the SFT recipe that train a part of the warm-up (the probe's own keys last). */
function partOverrides(part: WarmUpPart, common: string[], options: DemoOptions): string[] {
  const own = [
    `trainer.steps=${part.steps}`,
    `trainer.checkpointEvery=${part.checkpointEvery}`,
    `trainer.evalEvery=${part.evalEvery}`,
    `data.evalCount=${part.evalCount}`,
  ];
  return [
    `model.path=${part.from}`,
    ...common,
    ...(part.kind === "part" ? own : []),
    `trainer.evalFrom=${part.evalFrom}`,
    `trainer.learningRate=${part.learningRate}`,
    `trainer.warmupSteps=${part.warmupSteps}`,
    `trainer.decaySteps=${part.decaySteps}`,
    `trainer.minLearningRate=${part.minLearningRate}`,
    `trainer.trainThreads=${TRAIN_THREADS}`,
    "data.guidedFraction=0",
    ...overridesForAlgorithm("sft", options.extraOverrides ?? []),
    ...(part.kind === "probe" ? own : []),
  ];
}

/** Trains each part as `arc train` in a child process, each part recorded as a run of the product (the probe not). */
function demoPartRunner(runsDir: string, common: string[], options: DemoOptions, runs: DemoRunLineage) {
  const last: { outcome: TrainOutcome | null } = { outcome: null };
  const runPart: WarmUpPartRunner = async (part) => {
    const request: TrainRequest = {
      recipe: SFT_RECIPE,
      runsDir,
      runId: part.runId,
      overrides: partOverrides(part, common, options),
      deadline: part.deadline,
      stopAfter: part.stopAfter,
      onStep: (r) => part.onStep(r),
    };
    const outcome = part.kind === "probe" ? await trainCandidate(request) : await trainAsRun(runs, request);
    if (part.kind === "part") last.outcome = outcome;
    return {
      runId: outcome.runId,
      dir: outcome.dir,
      records: outcome.records,
      checkpoint: outcome.checkpoint,
      checkpointAt: (step) => join(outcome.dir, new RunDir(outcome.dir).checkpoint(step)),
      stoppedAtDeadline: outcome.stoppedAtDeadline,
    };
  };
  return { runPart, last };
}

/** The progress line of a warm-up step: the step counted over the whole warm-up, its loss and the ETA. */
function showStep(context: { deadline: number; live: LiveLine; progress: (line: string) => string }) {
  return (r: StepRecord, totalSteps: number, secondsPerStep: number | null) => {
    const eta = Math.max(
      0,
      Math.min((context.deadline - Date.now()) / 1000, (secondsPerStep ?? 0) * (totalSteps - r.step)),
    );
    context.live.update(
      context.progress(
        `SFT warm-up step ${r.step}/${totalSteps} loss ${r.loss?.toFixed(3) ?? "–"}${r.evalFailureRate !== undefined ? ` held-out failure ${r.evalFailureRate.toFixed(2)}` : ""} ETA ${eta.toFixed(0)} s`,
      ),
    );
  };
}

/**
 * The SFT warm-up, from the base model on the warm-up pool's reference answers: the product's planned warm-up
 * (`plannedWarmUp`, as a recipe's `sftWarmUp` with `budgetS` and `stopAt` runs it) over the demo family's SFT recipe,
 * each part trained by `arc train` in a child process and recorded as a run.
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
}): Promise<{ outcome: TrainOutcome; checkpoint: string | null; report: WarmUpReport }> {
  const { options, deadline } = context;
  const common = [`data.prompts=${context.poolPath}`, `data.seed=${options.seed}`];
  const block = demoWarmUpBlock(options, deadline, context.heldOutTarget);
  const { runPart, last } = demoPartRunner(join(context.home, "runs"), common, options, context.runs);
  context.live.update(context.progress("SFT warm-up: timing a few steps to plan the run"));
  const warmed = await plannedWarmUp(block, {
    from: context.baseModel,
    runId: `demo-sft-${options.seed}-${Date.now().toString(36)}`,
    deadline,
    evalCount: WARMUP_EVAL_COUNT,
    runPart,
    stepsName: "--sft-steps",
    say: (line) => options.out.write(`  SFT warm-up: ${line}\n`),
    onStep: showStep(context),
  });
  return { outcome: last.outcome as TrainOutcome, checkpoint: warmed.checkpoint, report: warmed.report };
}
