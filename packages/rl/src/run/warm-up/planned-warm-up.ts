import { rm } from "node:fs/promises";
import type { SftWarmUp } from "../../recipe/recipe-schema.ts";
import { warmUpSchedule } from "../../recipe/sft-warm-up-recipe.ts";
import type { StepRecord } from "../run-types.ts";
import {
  heldOutUpperBound,
  type JudgementSchedule,
  meetsTarget,
  type Pace,
  PartPace,
  plannedStepsThatFit,
  secondsOver,
} from "./warm-up-plan.ts";
import type { PlannedWarmUpContext, WarmUpPartOutcome, WarmUpReport } from "./warm-up-types.ts";

/** Steps of the probe that times a step before the plan, and the first one timed: the first few steps are slower. */
const PROBE_STEPS = 20;
const PROBE_TIMED_FROM = 6;
/** Held-out tasks the probe judges to time a judgement; a judgement's time grows with its tasks. */
const PROBE_EVAL_COUNT = 64;
/** Re-plans at most: a machine that keeps slowing down runs its last plan to the deadline. */
const MAX_REPLANS = 3;
/** Steps between the checkpoints a part may be re-planned from, when no stop rule judges it more often. */
const CHECKPOINT_EVERY = 200;
/** The judgements of a warm-up with no stop rule: its start and its last step only. */
const ENDS_ONLY: JudgementSchedule = { every: Number.MAX_SAFE_INTEGER, first: Number.MAX_SAFE_INTEGER };

/** Times a step and a held-out judgement's task with a short run of the warm-up, then removes it; null if it could not. */
async function probe(
  block: SftWarmUp,
  context: PlannedWarmUpContext,
  evalCount: number,
): Promise<{ stepS: number; secondsPerJudgedTask: number } | null> {
  const tasks = Math.min(PROBE_EVAL_COUNT, evalCount);
  const run = await context.runPart({
    kind: "probe",
    runId: `${context.runId}-probe`,
    from: context.from,
    steps: PROBE_STEPS,
    ...warmUpSchedule(block, PROBE_STEPS, block.learningRate, block.warmupSteps),
    evalCount: tasks,
    evalEvery: PROBE_STEPS,
    evalFrom: PROBE_STEPS,
    checkpointEvery: PROBE_STEPS,
    deadline: context.deadline,
    stopAfter: () => false,
    onStep: () => undefined,
  });
  await rm(run.dir, { recursive: true, force: true });
  const at = (step: number) => run.records.find((r) => r.step === step);
  const [from, to, start] = [at(PROBE_TIMED_FROM), at(PROBE_STEPS), at(0)];
  if (from === undefined || to === undefined || !(to.elapsedS > from.elapsedS)) return null;
  const stepS = (to.elapsedS - from.elapsedS) / (PROBE_STEPS - PROBE_TIMED_FROM);
  const judged = [start?.evalS, to.evalS].filter((s): s is number => s !== undefined);
  return {
    stepS,
    secondsPerJudgedTask: judged.length === 0 || tasks === 0 ? 0 : Math.max(...judged) / tasks,
  };
}

/** The stop rule of a plan of `steps`, as its plan line ends; empty without one. */
function stopRuleText(block: SftWarmUp, steps: number): string {
  const stop = block.stopAt;
  if (!stop) return "";
  return `; it stops sooner once the held-out failure rate's 95% upper bound is at most ${stop.failureRate.toFixed(3)} (judged on ${stop.evalCount} tasks at step ${Math.min(stop.evalFrom, steps)}, every ${Math.min(stop.evalEvery, steps)} steps after it and at its end)`;
}

/** The pace the first plan is made at (null without a budget, or when the probe could not time a step) and its steps. */
async function plan(
  block: SftWarmUp,
  context: PlannedWarmUpContext,
  evalCount: number,
  when: JudgementSchedule,
): Promise<{ pace: Pace | null; steps: number }> {
  if (block.budgetS === undefined) return { pace: null, steps: block.steps };
  const started = Date.now();
  const probed = await probe(block, context, evalCount);
  if (probed === null) {
    context.say?.(
      `${block.steps} steps (the probe could not time a step)${stopRuleText(block, block.steps)}`,
    );
    return { pace: null, steps: block.steps };
  }
  const pace = { stepS: probed.stepS, judgementS: probed.secondsPerJudgedTask * evalCount };
  const steps = plannedStepsThatFit(Date.now(), context.deadline, pace, block.steps, when);
  const capped =
    steps === block.steps ? ` (${context.stepsName ?? "sftWarmUp.steps"} ${block.steps} caps it)` : "";
  context.say?.(
    `${steps} step${steps === 1 ? "" : "s"}: a step took ${pace.stepS.toFixed(2)} s and a judgement of ${evalCount} tasks ${pace.judgementS.toFixed(1)} s in a ${((Date.now() - started) / 1000).toFixed(0)} s probe${capped}${stopRuleText(block, steps)}`,
  );
  return { pace, steps };
}

/** A part's pace at `step`: its seconds a step so far, and its judgements' slowed down as its steps did since the probe. */
function paceSoFar(stepPace: PartPace, probed: Pace | null, step: number, now: number): Pace | null {
  const stepS = stepPace.secondsPerStep(step, now);
  if (stepS === null) return null;
  const judgementS = probed === null ? 0 : (probed.judgementS * stepS) / probed.stepS;
  return { stepS, judgementS };
}

/**
 * Whether a part should be re-planned at `step`: at one of its checkpoints before its end, the rest of it would
 * overrun the deadline by more than `checkpointEvery` steps' time at its pace so far.
 */
function overrunsPlan(
  at: { step: number; planned: number; checkpointEvery: number; when: JudgementSchedule },
  pace: Pace | null,
  now: number,
  deadline: number,
): boolean {
  const { step, planned, checkpointEvery } = at;
  if (step === 0 || step >= planned || step % checkpointEvery !== 0 || pace === null) return false;
  return secondsOver({ planned, step, now, pace, when: at.when }, deadline) > checkpointEvery * pace.stepS;
}

/** What every part of one warm-up shares: its stop rule, judgements and checkpoints, and the first plan's pace. */
interface WarmUpRules {
  evalCount: number;
  target: number | null;
  firstWhen: JudgementSchedule;
  /** A re-planned part is judged from its first checkpoint on. */
  laterWhen: JudgementSchedule;
  checkpointEvery: number;
  probed: Pace | null;
}

/** The warm-up's rules from its block. */
function warmUpRules(block: SftWarmUp, evalCountWithoutStop: number): Omit<WarmUpRules, "probed"> {
  const stop = block.stopAt;
  return {
    evalCount: stop?.evalCount ?? evalCountWithoutStop,
    target: stop?.failureRate ?? null,
    firstWhen: stop ? { every: stop.evalEvery, first: stop.evalFrom } : ENDS_ONLY,
    laterWhen: stop ? { every: stop.evalEvery, first: stop.evalEvery } : ENDS_ONLY,
    checkpointEvery: stop?.evalEvery ?? CHECKPOINT_EVERY,
  };
}

/** A part to train: where it starts, its steps and peak rate, its place in the warm-up. */
interface PlannedPart {
  from: string;
  steps: number;
  learningRate: number;
  /** Steps of the warm-up before it, and re-plans before it (0: the first part). */
  offset: number;
  replans: number;
}

/**
 * Trains one part, stopping it at the first judgement that meets the target, or (while re-plans are left) at a
 * checkpoint where the rest of it would overrun the deadline; says which, and its pace as it went.
 */
async function trainPart(
  block: SftWarmUp,
  context: PlannedWarmUpContext,
  rules: WarmUpRules,
  part: PlannedPart,
) {
  const when = part.replans > 0 ? rules.laterWhen : rules.firstWhen;
  const every = Math.min(rules.checkpointEvery, part.steps);
  const mayReplan = block.budgetS !== undefined && part.replans < MAX_REPLANS;
  const stepPace = new PartPace();
  const paceAt = (step: number, now: number) => paceSoFar(stepPace, rules.probed, step, now);
  let reached: StepRecord | null = null;
  let replanFrom: StepRecord | null = null;
  const ramp = part.replans > 0 ? 2 * block.warmupSteps : block.warmupSteps;
  const outcome = await context.runPart({
    kind: "part",
    runId: part.replans > 0 ? `${context.runId}-part${part.replans + 1}` : context.runId,
    from: part.from,
    steps: part.steps,
    ...warmUpSchedule(block, part.steps, part.learningRate, ramp),
    evalCount: rules.evalCount,
    evalEvery: Math.min(when.every, part.steps),
    evalFrom: Math.min(when.first, part.steps),
    checkpointEvery: every,
    deadline: context.deadline,
    stopAfter: (r) => {
      if (meetsTarget(r, rules.target, rules.evalCount)) {
        reached ??= r;
        return true;
      }
      const now = Date.now();
      const at = { step: r.step, planned: part.steps, checkpointEvery: every, when };
      if (!mayReplan || !overrunsPlan(at, paceAt(r.step, now), now, context.deadline)) return false;
      replanFrom ??= r;
      return true;
    },
    onStep: (r) => {
      stepPace.saw(r.step, Date.now());
      const record = { ...r, step: part.offset + r.step };
      context.onStep?.(record, part.offset + part.steps, stepPace.secondsPerStep(r.step, Date.now()));
    },
  });
  return {
    outcome,
    reached: reached as StepRecord | null,
    replanFrom: replanFrom as StepRecord | null,
    paceAt,
  };
}

/** The warm-up's report from its parts' kept records, its plan and how it ended. */
function warmUpReport(
  block: SftWarmUp,
  rules: WarmUpRules,
  run: {
    records: StepRecord[];
    replans: WarmUpReport["replans"];
    plannedSteps: number;
    started: number;
    /** Seconds of training (judgements excluded) of the steps kept. */
    trainSeconds: number;
  },
  end: { last: WarmUpPartOutcome; targetReachedAtStep: number | null; deadline: number },
): WarmUpReport {
  const { records } = run;
  const { trainSeconds } = run;
  const tokens = records.reduce((sum, r) => sum + (r.step > 0 ? r.tokens : 0), 0);
  const steps = records.at(-1)?.step ?? 0;
  const heldOut = records.filter((r) => r.evalFailureRate !== undefined).at(-1)?.evalFailureRate;
  return {
    runId: end.last.runId,
    steps,
    plannedSteps: run.plannedSteps,
    maxSteps: block.steps,
    secondsPerStep: steps > 0 && trainSeconds > 0 ? trainSeconds / steps : (rules.probed?.stepS ?? null),
    tokensPerSecond: trainSeconds > 0 ? tokens / trainSeconds : null,
    heldOutTarget: rules.target,
    budgetS: (end.deadline - run.started) / 1000,
    targetReachedAtStep: end.targetReachedAtStep,
    heldOutFailureRate: heldOut ?? null,
    heldOutUpperBound: heldOut === undefined ? null : heldOutUpperBound(heldOut, rules.evalCount),
    stoppedAtDeadline: end.last.stoppedAtDeadline,
    replans: run.replans,
    records,
  };
}

/**
 * An SFT warm-up planned to its block: with `budgetS`, a probe's pace fits its steps and their judgements in the time
 * (`steps` at most), and a part that the machine slowed so much that its rest would overrun goes on from its last
 * checkpoint with a new plan (the rate decaying from where it was over the steps that now fit; 3 re-plans at most);
 * with `stopAt`, it is judged on its schedule and stops at the first judgement whose 95% Wilson upper bound is at most
 * the target, handing on that step's checkpoint. Resolves to the checkpoint handed on (null: none was written).
 */
export async function plannedWarmUp(
  block: SftWarmUp,
  context: PlannedWarmUpContext,
): Promise<{ checkpoint: string | null; report: WarmUpReport; last: WarmUpPartOutcome }> {
  const started = Date.now();
  const base = warmUpRules(block, context.evalCount);
  const first = await plan(block, context, base.evalCount, base.firstWhen);
  const rules: WarmUpRules = { ...base, probed: first.pace };
  const records: StepRecord[] = [];
  const replans: WarmUpReport["replans"] = [];
  let trainSeconds = 0;
  let part: PlannedPart = {
    from: context.from,
    steps: first.steps,
    learningRate: block.learningRate,
    offset: 0,
    replans: 0,
  };
  for (;;) {
    const { outcome, reached, replanFrom, paceAt } = await trainPart(block, context, rules, part);
    const stopStep = (reached ?? replanFrom)?.step;
    const kept = outcome.records.filter(
      (r) => (part.offset === 0 || r.step > 0) && (stopStep === undefined || r.step <= stopStep),
    );
    records.push(...kept.map((r) => ({ ...r, step: part.offset + r.step })));
    trainSeconds += kept.filter((r) => r.step > 0).at(-1)?.elapsedS ?? 0;
    if (reached || replanFrom === null) {
      const report = warmUpReport(
        block,
        rules,
        { records, replans, plannedSteps: first.steps, started, trainSeconds },
        {
          last: outcome,
          targetReachedAtStep: reached ? part.offset + reached.step : null,
          deadline: context.deadline,
        },
      );
      return {
        checkpoint: reached ? outcome.checkpointAt(reached.step) : outcome.checkpoint,
        report,
        last: outcome,
      };
    }
    const pace = paceAt(replanFrom.step, Date.now()) as Pace;
    const steps = plannedStepsThatFit(
      Date.now(),
      context.deadline,
      pace,
      part.steps - replanFrom.step,
      rules.laterWhen,
    );
    const offset = part.offset + replanFrom.step;
    replans.push({ atStep: offset, secondsPerStep: pace.stepS, plannedSteps: offset + steps });
    context.say?.(
      `at step ${offset} a step takes ${pace.stepS.toFixed(2)} s, so the plan would not end by the deadline; it goes on from that checkpoint for ${steps} more steps`,
    );
    part = {
      from: outcome.checkpointAt(replanFrom.step),
      steps,
      learningRate: replanFrom.learningRate ?? part.learningRate,
      offset,
      replans: replans.length,
    };
  }
}
