// RL benchmark on the `toolcall` environment from its shipped base model (models/toolcall-base):
// held-out (production split) failure rate and reward vs wall time for semi-online DPO with
// s in {1, 10, 100, inf} and GRPO at the same prompt budget, and synchronous (maxStaleness 0) vs
// asynchronous (maxStaleness 1, 2) GRPO with rollouts in a worker thread: wall time to the same reward (held to the
// end of the run, see async_speedup_vs_sync). Outside that budget, one wide GRPO run (32 fresh prompts x 8 samples a
// step, verifier reward) for `--wide-steps` steps: the RL setting that moves the failure rate most. And,
// as the reference that is not RL, `--sft-steps` of SFT on the reference answers of 8,192 production prompts (the
// SFT warm-up of the SFT -> RL pipeline, as `arc demo` runs it on its traffic's labels), and the whole pipeline:
// `--after-sft-steps` of semi-online DPO (s=10, verifier reward) from that SFT checkpoint, timed from the SFT's start.
// Usage: node --import tsx bench/rl.bench.ts [--steps 120] [--prompts 8] [--wide-steps 100] [--sft-steps 400]
//        [--after-sft-steps 60] [--eval 64] [--judge 512] [--pass-at-k-tasks 256] [--pass-at-k-samples 8]
//        [--ppo-epochs 1] [--async-rounds 1] [--only dpo|grpo|sft] [--model models/toolcall-base]
// `--async-rounds N` runs the sync vs async comparison (GRPO at staleness 0, 1, 2) N times, interleaved, and reports
// the median speed-up: on a shared machine the same run's time can differ by a quarter from one run to the next.
// `--only grpo --wide-steps 0` runs the three GRPO settings alone (the sync vs async comparison); `--only sft` runs
// the SFT reference and the pipeline built on it; `--pass-at-k-tasks 0` skips pass@k. Default: 7 runs x 120 steps x
// 8 prompts x 4 samples (1.5-2 min each from the shipped base), 100 wide steps (about 9 min, inside the 10 min the
// target allows), 400 SFT steps (4 min on two train threads) and 60 DPO steps after them (1-2 min): about 32 min in
// all on an idle 2-core machine.
// `--eval` tasks draw the curves during a run; the base model and every run's final checkpoint are then judged on
// `--judge` other production tasks (seed 1000), because 64 tasks cannot see a change of a few points (one standard
// error is 0.06 there, 0.02 at 512): the figures file's failure rates are the judged ones. The base model's pass@k at
// temperature 1 on the first `--pass-at-k-tasks` judge tasks estimates how far training on its own samples can reach.
// Writes bench/results/rl.json (the figures file), bench/results/rl.md and bench/results/rl-*.svg.
import { mkdir, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { InferenceEngine, Task } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import { EmbeddedInferenceEngine } from "@arc/engine";
import {
  evaluate,
  lineChartSvg,
  parseRecipe,
  type RunResult,
  type StepRecord,
  sampledPassRate,
  startRun,
} from "@arc/rl";
import { AsyncRolloutSource, engineFactory, type ThreadUsage } from "@arc/rl/embedded";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "120" },
    prompts: { type: "string", default: "8" },
    eval: { type: "string", default: "64" },
    judge: { type: "string", default: "512" },
    "pass-at-k-tasks": { type: "string", default: "256" },
    "pass-at-k-samples": { type: "string", default: "8" },
    "wide-steps": { type: "string", default: "100" },
    "sft-steps": { type: "string", default: "400" },
    "after-sft-steps": { type: "string", default: "60" },
    "ppo-epochs": { type: "string", default: "1" },
    only: { type: "string" },
    "async-rounds": { type: "string", default: "1" },
    model: { type: "string", default: "models/toolcall-base" },
  },
});
/** The integer value of flag `--name`, at least `min`. */
function intFlag(name: keyof typeof values, min: number): number {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`--${name}: expected an integer >= ${min}, got ${JSON.stringify(values[name])}`);
  }
  return value;
}
const STEPS = intFlag("steps", 1);
const PROMPTS = intFlag("prompts", 1);
const EVAL = intFlag("eval", 1);
const JUDGE = intFlag("judge", 1);
const PASS_AT_K_TASKS = Math.min(intFlag("pass-at-k-tasks", 0), JUDGE);
const PASS_AT_K_SAMPLES = intFlag("pass-at-k-samples", 1);
const WIDE_STEPS = intFlag("wide-steps", 0);
const SFT_STEPS = intFlag("sft-steps", 0);
const AFTER_SFT_STEPS = intFlag("after-sft-steps", 0);
/** Updates per rollout batch of the same-budget GRPO settings (`trainer.ppoEpochs`). */
const PPO_EPOCHS = intFlag("ppo-epochs", 1);
/**
 * Rounds of the sync vs async comparison: its three GRPO runs (staleness 0, 1, 2) run this many times, interleaved,
 * and the figures are the median over rounds, since on a shared machine one run's speed can differ from the next's.
 */
const ASYNC_ROUNDS = intFlag("async-rounds", 1);
/** The production tasks the base model and each run's final checkpoint are judged on (not the runs' prompts, seed 1). */
const JUDGE_TASKS = toolcallFamily.generate({ split: "production", seed: 1000, count: JUDGE });

/**
 * The base model's greedy pass rate (from its judged answers, `greedyPassed`, one per task) and its pass@k at
 * temperature 1 on `tasks`, overall and per request template.
 */
async function basePassAtK(engine: InferenceEngine, tasks: Task[], greedyPassed: boolean[]) {
  const sampled = await sampledPassRate(engine, tasks, { samples: PASS_AT_K_SAMPLES });
  const byTemplate = new Map<string, { tasks: number; greedy: number; reached: number }>();
  tasks.forEach((task, i) => {
    const template = String(task.meta?.template ?? "all");
    const row = byTemplate.get(template) ?? { tasks: 0, greedy: 0, reached: 0 };
    row.tasks++;
    if (greedyPassed[i]) row.greedy++;
    if (sampled.passedPerTask[i] > 0) row.reached++;
    byTemplate.set(template, row);
  });
  const templates = [...byTemplate]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([template, row]) => ({
      template,
      tasks: row.tasks,
      greedy_pass: row.greedy / row.tasks,
      pass_at_k: row.reached / row.tasks,
    }));
  return { greedy: greedyPassed.filter(Boolean).length / tasks.length, templates, ...sampled };
}

/** Greedy failure rate of a checkpoint directory on JUDGE_TASKS. */
async function judgeFailureRate(dir: string): Promise<number> {
  return (await evaluate(await EmbeddedInferenceEngine.load(dir), JUDGE_TASKS)).failureRate;
}

interface Setting {
  label: string;
  algo: "dpo" | "grpo" | "sft";
  /** Which `--only` selects it: its algorithm, or for a pipeline the family of its first stage. */
  family: "dpo" | "grpo" | "sft";
  /** For the second stage of a pipeline: the label of the setting whose final checkpoint it starts from. */
  startsFrom?: string;
  syncInterval: number | "inf" | null;
  staleness: number | null;
  /** Optimizer steps, prompts per step and samples per prompt. */
  steps: number;
  prompts: number;
  samples: number;
  /** How many distinct production prompts the run draws from (seed 1). */
  promptPool: number;
  /** The rollouts' reward; null for SFT, which trains on reference answers and samples nothing. */
  rewardKind: "partial" | "verifier" | null;
  /** Whether the setting belongs to the same-prompt-budget comparison (and so to the sync vs async one). */
  sameBudget: boolean;
  /** For the sync vs async GRPO runs: which round of the comparison (`--async-rounds`) the run belongs to. */
  round?: number;
  trainer: Record<string, unknown>;
}

/** The shape every setting of the same-prompt-budget comparison shares. */
const BUDGET = {
  steps: STEPS,
  prompts: PROMPTS,
  samples: 4,
  promptPool: 512,
  rewardKind: "partial",
  sameBudget: true,
} as const;

const SFT_LABEL = "sft on labels";

const ALL_SETTINGS: Setting[] = [
  ...([1, 10, 100, "inf"] as const).map(
    (s): Setting => ({
      label: `dpo s=${s}`,
      algo: "dpo",
      family: "dpo",
      syncInterval: s,
      staleness: null,
      ...BUDGET,
      trainer: { algorithm: "dpo", syncInterval: s, learningRate: 1e-4, beta: 0.1 },
    }),
  ),
  ...Array.from({ length: ASYNC_ROUNDS }, (_, r) => r + 1).flatMap((round) =>
    [0, 1, 2].map(
      (eta): Setting => ({
        label: `grpo staleness=${eta}${ASYNC_ROUNDS > 1 ? ` #${round}` : ""}`,
        round,
        algo: "grpo",
        family: "grpo",
        syncInterval: null,
        staleness: eta,
        ...BUDGET,
        trainer: {
          algorithm: "grpo",
          learningRate: 1e-4,
          asyncRollouts: true,
          maxStaleness: eta,
          decoupled: eta > 0,
          maxConcurrentRollouts: PROMPTS * 3,
          ppoEpochs: PPO_EPOCHS,
        },
      }),
    ),
  ),
  // Outside the budget: the RL setting that does best on this model (wide batches of fresh prompts, each prompt seen
  // about once, so the policy cannot memorize a small pool), at twice the prompts of the others.
  {
    label: "grpo wide staleness=1",
    algo: "grpo",
    family: "grpo",
    syncInterval: null,
    staleness: 1,
    steps: WIDE_STEPS,
    prompts: 32,
    samples: 8,
    promptPool: 4096,
    rewardKind: "verifier",
    sameBudget: false,
    trainer: {
      algorithm: "grpo",
      learningRate: 1e-4,
      asyncRollouts: true,
      maxStaleness: 1,
      decoupled: true,
      maxConcurrentRollouts: 64,
    },
  },
  // Not RL, and outside the budget: SFT on reference answers, 16 a step from 8,192 production prompts, 1e-3 decayed
  // along a cosine to 1e-5, on two train threads (nothing samples on the second core; the same-budget settings keep
  // one thread, and the GRPO ones leave the second core to their rollout worker). In PyTorch on the same model this
  // is the best of the schedules and pool sizes compared (400 steps: 0.090 from 0.221; 0.098 at 3e-4; constant
  // rates 0.10-0.16).
  {
    label: SFT_LABEL,
    algo: "sft",
    family: "sft",
    syncInterval: null,
    staleness: null,
    steps: SFT_STEPS,
    prompts: 16,
    samples: 1,
    promptPool: 8192,
    rewardKind: null,
    sameBudget: false,
    trainer: {
      algorithm: "sft",
      learningRate: 1e-3,
      warmupSteps: 5,
      decaySteps: Math.max(1, SFT_STEPS - 5),
      minLearningRate: 1e-5,
      trainThreads: 2,
    },
  },
  // The SFT -> RL pipeline: semi-online DPO from the SFT checkpoint at `arc demo`'s after-warm-up settings (verifier
  // reward, so pairs only between a passing and a failing sample; 3e-5), on prompts from the same production traffic.
  {
    label: "sft -> dpo s=10",
    algo: "dpo",
    family: "sft",
    startsFrom: SFT_LABEL,
    syncInterval: 10,
    staleness: null,
    steps: SFT_STEPS > 0 ? AFTER_SFT_STEPS : 0,
    prompts: 8,
    samples: 4,
    promptPool: 4096,
    rewardKind: "verifier",
    sameBudget: false,
    trainer: { algorithm: "dpo", syncInterval: 10, learningRate: 3e-5, beta: 0.1, trainThreads: 2 },
  },
];
if (values.only !== undefined && !["dpo", "grpo", "sft"].includes(values.only)) {
  throw new RangeError(`--only: expected dpo, grpo or sft, got ${JSON.stringify(values.only)}`);
}
const SETTINGS = ALL_SETTINGS.filter(
  (s) => (values.only === undefined || s.family === values.only) && s.steps > 0,
);

interface Outcome {
  setting: Setting;
  result: RunResult;
  wallS: number;
  /**
   * Wall seconds from the start of the run (of the pipeline's first stage, for a second stage) to the end of each
   * step (evaluations included, the same for every setting).
   */
  wallAt: Map<number, number>;
  usage?: ThreadUsage;
  /** The final checkpoint's failure rate on JUDGE_TASKS. */
  judgedFailureRate: number;
}

/** The final checkpoint directory of a finished run. */
function finalCheckpoint(label: string, result: RunResult): string {
  if (result.lastCheckpoint === null) throw new Error(`${label}: the run wrote no checkpoint`);
  return join(result.dir, result.lastCheckpoint);
}

/** Runs one setting; a pipeline's second stage starts from `first`'s final checkpoint, its clock from `first`'s start. */
async function runSetting(setting: Setting, runsDir: string, first?: Outcome): Promise<Outcome> {
  const recipe = parseRecipe({
    name: setting.label.replace(/[^a-z0-9]+/gi, "-"),
    model: { path: first === undefined ? values.model : finalCheckpoint(first.setting.label, first.result) },
    data: {
      env: "toolcall",
      split: "production",
      count: setting.promptPool,
      seed: 1,
      evalSplit: "production",
      evalSeed: 999,
      evalCount: EVAL,
    },
    trainer: {
      steps: setting.steps,
      promptsPerStep: setting.prompts,
      ...(setting.algo === "sft" ? {} : { samplesPerPrompt: setting.samples, temperature: 1 }),
      maxTokens: 96,
      checkpointEvery: setting.steps,
      evalEvery: Math.max(1, Math.floor(setting.steps / 6)),
      ...setting.trainer,
    },
    ...(setting.rewardKind === null ? {} : { reward: { kind: setting.rewardKind } }),
  });
  let source: AsyncRolloutSource | undefined;
  const began = performance.now() - (first?.wallS ?? 0) * 1000;
  const wallAt = new Map<number, number>([[0, first?.wallS ?? 0]]);
  const result = await startRun(recipe, {
    runsDir,
    factory: engineFactory,
    asyncSource: async (args) => {
      source = (await AsyncRolloutSource.create(args)) as AsyncRolloutSource;
      return source;
    },
    hooks: {
      onStep: (r) => {
        wallAt.set(r.step, (performance.now() - began) / 1000);
        if (r.evalFailureRate !== undefined) {
          process.stderr.write(
            `  ${setting.label} step ${r.step} held-out failure ${r.evalFailureRate.toFixed(3)}${r.reward == null ? "" : ` reward ${r.reward.toFixed(3)}`} (${wallAt.get(r.step)?.toFixed(0)}s)\n`,
          );
        }
      },
    },
  });
  const usage = source?.usage();
  const wallS = (performance.now() - began) / 1000;
  const judgedFailureRate = await judgeFailureRate(finalCheckpoint(setting.label, result));
  process.stderr.write(
    `  ${setting.label}: final checkpoint fails ${judgedFailureRate.toFixed(3)} of ${JUDGE} judge tasks\n`,
  );
  return { setting, result, wallS, wallAt, usage, judgedFailureRate };
}

/** Moving average of the rollout reward over `window` steps, with the wall seconds at each step. */
function smoothedReward(o: Outcome, window = 5): { t: number; r: number }[] {
  const steps = o.result.records.filter((r: StepRecord) => r.step > 0 && r.reward !== null);
  return steps.map((rec, i) => {
    const slice = steps.slice(Math.max(0, i - window + 1), i + 1);
    return {
      t: o.wallAt.get(rec.step) ?? Number.NaN,
      r: slice.reduce((a, s) => a + (s.reward ?? 0), 0) / slice.length,
    };
  });
}

/** Wall seconds until the smoothed reward first reaches `target`; null if it never does. */
const timeToReward = (o: Outcome, target: number) => smoothedReward(o).find((p) => p.r >= target)?.t ?? null;

/** Mean rollout reward over the run's last third of steps, and its standard error. */
function tailReward(o: Outcome): { mean: number; se: number } {
  const rewards = o.result.records
    .filter((r) => r.step > (2 * o.setting.steps) / 3 && r.reward !== null)
    .map((r) => r.reward as number);
  const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
  const variance = rewards.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, rewards.length - 1);
  return { mean, se: Math.sqrt(variance / rewards.length) };
}

/** Held-out failure rate at each evaluation, by wall seconds. */
const evalPoints = (o: Outcome) =>
  o.result.records
    .filter((r) => r.evalFailureRate !== undefined)
    .map((r) => ({ x: o.wallAt.get(r.step) ?? Number.NaN, y: r.evalFailureRate as number }));

const toEnd = (o: Outcome) => o.wallAt.get(o.setting.steps) ?? o.wallS;

/** One round of sync (staleness 0) vs async GRPO: speed-ups to the sync run's reward, and what overlapping could give at most. */
function compareAsync(outcomes: Outcome[], round: number) {
  const grpo = outcomes.filter((o) => o.setting.round === round);
  const sync = grpo.find((o) => o.setting.staleness === 0);
  const asyncRuns = grpo.filter((o) => o.setting.staleness !== 0);
  if (sync === undefined || asyncRuns.length === 0) return null;
  // "the same reward", held: an async run whose reward over the last third of the run is no lower than the sync
  // run's (within one standard error of the difference) and whose judged checkpoint is no worse (within one standard
  // error) reached the sync run's reward, and its speed-up is the sync run's wall time to its last step over its own
  const syncTail = tailReward(sync);
  const judged = sync.judgedFailureRate;
  const judgeSe = Math.sqrt((2 * judged * (1 - judged)) / JUDGE);
  const matching = asyncRuns.filter((o) => {
    const tail = tailReward(o);
    return (
      tail.mean >= syncTail.mean - Math.hypot(tail.se, syncTail.se) && o.judgedFailureRate <= judged + judgeSe
    );
  });
  const speedup = matching.length > 0 ? toEnd(sync) / Math.min(...matching.map(toEnd)) : null;
  // the first-crossing view: 90% of the way from the sync run's first smoothed reward to its best; noisy when the
  // reward reaches its level within a few steps
  const syncCurve = smoothedReward(sync);
  const start = syncCurve[0]?.r ?? 0;
  const peak = Math.max(...syncCurve.map((p) => p.r));
  const target = peak > start ? start + 0.9 * (peak - start) : null;
  const syncTime = target === null ? null : timeToReward(sync, target);
  const asyncTimes = asyncRuns
    .map((o) => (target === null ? null : timeToReward(o, target)))
    .filter((t): t is number => t !== null);
  const crossingSpeedup =
    syncTime !== null && asyncTimes.length > 0 ? syncTime / Math.min(...asyncTimes) : null;
  // What overlapping could give at most: the sync run's trainer waited `wait` of its `total` seconds for rollouts, so
  // with generation fully hidden behind training (or the reverse) a step takes max(wait, total - wait).
  const syncTotal = sync.result.records.at(-1)?.elapsedS ?? null;
  const syncWait = sync.usage?.trainerWaitS ?? null;
  const ceiling =
    syncTotal !== null && syncWait !== null && syncTotal > 0
      ? syncTotal / Math.max(syncWait, syncTotal - syncWait)
      : null;
  // The same bound with the slowdowns the fastest async run really had (both threads on one core each, beside each
  // other): its worker's busy seconds against the sync worker's, and its training seconds against the sync run's.
  const fastest = asyncRuns.reduce((a, b) => (toEnd(b) < toEnd(a) ? b : a));
  const trainS = (o: Outcome) => (o.result.records.at(-1)?.elapsedS ?? 0) - (o.usage?.trainerWaitS ?? 0);
  const work = (o: Outcome) => ({ generate: o.usage?.workerBusyS ?? null, train: trainS(o) });
  const syncWork = work(sync);
  const asyncWork = work(fastest);
  const ceilingWithSlowdowns =
    syncWork.generate !== null && asyncWork.generate !== null
      ? (syncWork.generate + syncWork.train) / Math.max(asyncWork.generate, asyncWork.train)
      : null;
  return {
    round,
    speedup,
    crossingSpeedup,
    ceiling,
    ceilingWithSlowdowns,
    fastest,
    syncWork,
    asyncWork,
    target,
    syncTail,
    syncTotal,
    syncWait,
    matching,
    asyncRuns,
  };
}

async function main() {
  const runsDir = join(tmpdir(), `arc-rl-bench-${process.pid}`);
  const outcomes: Outcome[] = [];
  const benchBegan = performance.now();
  const baseEngine = await EmbeddedInferenceEngine.load(values.model);
  const baseJudged = await evaluate(baseEngine, JUDGE_TASKS);
  const base = baseJudged.failureRate;
  process.stderr.write(`base model fails ${base.toFixed(3)} of ${JUDGE} judge tasks\n`);
  const passAtK =
    PASS_AT_K_TASKS > 0
      ? await basePassAtK(
          baseEngine,
          JUDGE_TASKS.slice(0, PASS_AT_K_TASKS),
          baseJudged.passed.slice(0, PASS_AT_K_TASKS),
        )
      : null;
  if (passAtK !== null) {
    process.stderr.write(
      `base model on the first ${passAtK.tasks} judge tasks: greedy pass ${passAtK.greedy.toFixed(3)}, pass@${passAtK.samples} ${passAtK.passAtK.toFixed(3)} (samples pass ${passAtK.meanPass.toFixed(3)})\n`,
    );
  }
  for (const setting of SETTINGS) {
    process.stderr.write(
      `${setting.label}: ${setting.steps} steps x ${setting.prompts} prompts x ${setting.samples} samples\n`,
    );
    const first = outcomes.find((o) => o.setting.label === setting.startsFrom);
    outcomes.push(await runSetting(setting, runsDir, first));
  }
  await rm(runsDir, { recursive: true, force: true });

  const curveBase = outcomes[0].result.records[0].evalFailureRate as number;
  const curveFinal = (o: Outcome) =>
    [...o.result.records].reverse().find((r) => r.evalFailureRate !== undefined)?.evalFailureRate as number;
  const final = (o: Outcome) => o.judgedFailureRate;
  const best = outcomes.reduce((a, b) => (final(b) < final(a) ? b : a));
  // A run halves the failure rate when its judged final checkpoint does; the curve says how soon it got there.
  const halfTimes = outcomes
    .filter((o) => final(o) <= base / 2)
    .map((o) => evalPoints(o).find((p) => p.x > 0 && p.y <= curveBase / 2)?.x ?? o.wallS);
  const comparisons = Array.from({ length: ASYNC_ROUNDS }, (_, r) => compareAsync(outcomes, r + 1)).filter(
    (c) => c !== null,
  );
  /** The median over rounds of a figure, leaving out rounds where it is null; null when every round's is. */
  const medianOf = (pick: (c: (typeof comparisons)[number]) => number | null): number | null => {
    const known = comparisons.map(pick).filter((v): v is number => v !== null);
    return known.length > 0 ? median(known) : null;
  };
  const comparisonOf = (o: Outcome) => comparisons.find((c) => c.round === (o.setting.round ?? 1));
  const figures = {
    base_failure_rate: base,
    best_failure_rate: final(best),
    best_setting: best.setting.label,
    seconds_to_half_failure_rate: halfTimes.length > 0 ? Math.min(...halfTimes) : null,
    /** Median over the rounds of the comparison (`--async-rounds`) that reached the sync run's reward. */
    async_speedup_vs_sync: medianOf((c) => c.speedup),
    /** Each round's speed-up, in the order they ran (null: no async run of that round held the sync run's reward). */
    async_speedup_rounds: comparisons.map((c) => c.speedup),
    /** Sync over the fastest async run's wall seconds to first reach 90% of the sync run's reward rise (noisy). */
    async_speedup_first_crossing: medianOf((c) => c.crossingSpeedup),
    /** The most overlapping generation with training could give, from the sync run's own waiting (see above). */
    async_speedup_ceiling: medianOf((c) => c.ceiling),
    /**
     * The same with the slowdowns the fastest async run had: the sync run's worker-busy plus training seconds over
     * the larger of the async run's two; what is left between it and the speed-up is one side waiting for the other.
     */
    async_speedup_ceiling_with_slowdowns: medianOf((c) => c.ceilingWithSlowdowns),
    /**
     * The base model on the first `tasks` judge tasks: greedy pass rate, and at temperature 1 the share of tasks
     * some of `samples` answers passed (pass_at_k: how far training on its own samples can reach, roughly) and
     * the share of all samples that passed.
     */
    base_pass_at_k:
      passAtK === null
        ? null
        : {
            tasks: passAtK.tasks,
            samples: passAtK.samples,
            greedy_pass: passAtK.greedy,
            pass_at_k: passAtK.passAtK,
            mean_pass: passAtK.meanPass,
            by_template: passAtK.templates,
          },
    runs: outcomes.map((o) => ({
      setting: o.setting.label,
      algo: o.setting.algo,
      sync_interval: o.setting.syncInterval,
      staleness: o.setting.staleness,
      /** For a pipeline's second stage, the setting it started from; its wall_s counts that stage's time too. */
      starts_from: o.setting.startsFrom ?? null,
      final_failure_rate: final(o),
      /** The last point of the run's own EVAL-task curve. */
      curve_final_failure_rate: curveFinal(o),
      wall_s: Number(o.wallS.toFixed(1)),
      steps: o.setting.steps,
      prompts_per_step: o.setting.prompts,
      samples_per_prompt: o.setting.samples,
      /** Optimizer updates per rollout batch (GRPO's `trainer.ppoEpochs`). */
      ppo_epochs:
        o.setting.algo === "grpo" ? ((o.setting.trainer.ppoEpochs as number | undefined) ?? 1) : null,
      reward: o.setting.rewardKind,
      prompt_pool: o.setting.promptPool,
    })),
  };
  writeBenchResults("rl", figures);
  await mkdir("bench/results", { recursive: true });

  const failureSvg = lineChartSvg({
    title: "Held-out (production) failure rate vs run time",
    series: outcomes.map((o) => ({ name: o.setting.label, points: evalPoints(o) })),
    xLabel: "wall seconds",
    yLabel: "failure rate",
    yMin: 0,
  });
  const rewardSvg = lineChartSvg({
    title: "Rollout reward (5-step moving average) vs wall time",
    series: outcomes.map((o) => ({
      name: o.setting.label,
      points: smoothedReward(o).map((p) => ({ x: p.t, y: p.r })),
    })),
    xLabel: "wall seconds",
    yLabel: "reward",
  });
  await writeFile("bench/results/rl-failure.svg", failureSvg);
  await writeFile("bench/results/rl-reward.svg", rewardSvg);

  const fmt = (v: number | null | undefined, d = 3) => (v === null || v === undefined ? "n/a" : v.toFixed(d));
  const describeComparison = (comparison: (typeof comparisons)[number]) =>
    `Async speed-up vs sync: ${fmt(comparison.speedup, 2)}x (wall time to the sync run's reward, held: the sync run's time to its last step over the fastest async run's ` +
    `among those whose reward over the last third of the run (sync ${fmt(comparison.syncTail.mean)} ± ${fmt(comparison.syncTail.se)}) and judged failure rate match it within one standard error; ` +
    `${comparison.matching.length} of ${comparison.asyncRuns.length} do). ` +
    `By first crossing of ${fmt(comparison.target)} smoothed reward (90% of the sync run's rise; noisy when the reward levels off within a few steps): ${fmt(comparison.crossingSpeedup, 2)}x. ` +
    `Ceiling: the sync run's trainer waited ${fmt(comparison.syncWait, 0)} s of its ${fmt(comparison.syncTotal, 0)} s for rollouts, ` +
    `so hiding generation behind a trainer as fast as the sync one could make it at most ${fmt(comparison.ceiling, 2)}x faster ` +
    "(both threads need a free core each; on a shared machine they get less, see CPU s per wall s). " +
    `Beside each other both threads slow down: the fastest async run (${comparison.fastest.setting.label}) kept its rollout worker busy ${fmt(comparison.asyncWork.generate, 0)} s ` +
    `(the sync run's: ${fmt(comparison.syncWork.generate, 0)} s) and trained ${fmt(comparison.asyncWork.train, 0)} s (sync: ${fmt(comparison.syncWork.train, 0)} s), ` +
    `so even overlapped without a gap it could be at most ${fmt(comparison.ceilingWithSlowdowns, 2)}x faster than the sync run; ` +
    "the rest is one thread waiting for the other (a training step takes from milliseconds, when no group has a reward spread, to seconds, and the worker may run only `maxStaleness` batches ahead).\n";
  const md = [
    `# RL benchmark (toolcall, from ${values.model})`,
    "",
    `Budget per run: ${STEPS} steps x ${PROMPTS} prompts x 4 samples from a pool of 512 (GRPO: ${PPO_EPOCHS} optimizer update(s) a step; same prompt budget for every setting but the wide one: ${WIDE_STEPS} steps x 32 prompts x 8 samples from a pool of 4,096, verifier reward; ` +
      `the SFT reference, which is not RL: ${SFT_STEPS} steps x 16 reference answers from 8,192 production prompts, 1e-3 decayed to 1e-5; ` +
      `and the SFT -> RL pipeline: ${AFTER_SFT_STEPS} semi-online DPO steps (s=10, verifier reward, 3e-5) x 8 prompts x 4 samples from that SFT checkpoint, its times counted from the SFT's start), ` +
      `curves: ${EVAL} held-out production-split tasks (seed 999, disjoint from the training prompts); ` +
      `judged: the base model and each run's final checkpoint on ${JUDGE} other production tasks (seed 1000; one standard error ${fmt(Math.sqrt((base * (1 - base)) / JUDGE))}), greedy decoding. ` +
      `Whole bench: ${((performance.now() - benchBegan) / 60000).toFixed(1)} min on ${cpus().length} cores.`,
    "",
    `Base failure rate ${fmt(base)}; best ${fmt(final(best))} (${best.setting.label}); ` +
      `seconds to half the failure rate: ${fmt(figures.seconds_to_half_failure_rate, 0)}.`,
    "",
    comparisons.length === 0
      ? "No sync vs async comparison: it needs the GRPO settings (`--only grpo` or all).\n"
      : comparisons.length === 1
        ? describeComparison(comparisons[0])
        : `Async speed-up vs sync, median of ${comparisons.length} rounds run one after another (staleness 0, 1, 2, then again): ` +
          `**${fmt(figures.async_speedup_vs_sync, 2)}x** (rounds: ${comparisons.map((c) => fmt(c.speedup, 2)).join(", ")}); ` +
          `first crossing ${fmt(figures.async_speedup_first_crossing, 2)}x; ceiling ${fmt(figures.async_speedup_ceiling, 2)}x, ` +
          `with the slowdowns the async runs had ${fmt(figures.async_speedup_ceiling_with_slowdowns, 2)}x.\n\n` +
          comparisons.map((c) => `Round ${c.round}: ${describeComparison(c)}`).join("\n"),
    passAtK === null
      ? "No pass@k (`--pass-at-k-tasks 0`).\n"
      : `How far sampling reaches: on the first ${passAtK.tasks} judge tasks the base model's greedy answer passes ${fmt(passAtK.greedy)}; ` +
        `at temperature 1 it answers ${fmt(passAtK.meanPass)} of its samples right, and at least one of ${passAtK.samples} on ${fmt(passAtK.passAtK)} of the tasks. ` +
        `DPO and GRPO reinforce answers the model samples, so a task it never samples right gives them nothing to reinforce: ` +
        `even if every task it samples right at least once were answered right greedily, the failure rate there would be ${fmt(1 - passAtK.passAtK)} ` +
        `(halving needs ${fmt((1 - passAtK.greedy) / 2)}; more samples, partial rewards and generalization reach somewhat further).\n\n` +
        `| request template | tasks | greedy pass | pass@${passAtK.samples} |\n|---|---|---|---|\n` +
        passAtK.templates
          .map((t) => `| ${t.template} | ${t.tasks} | ${fmt(t.greedy_pass, 2)} | ${fmt(t.pass_at_k, 2)} |`)
          .join("\n") +
        "\n",
    STEPS <= 100 && SETTINGS.some((s) => s.algo === "dpo")
      ? `With ${STEPS} steps per run, s=100 never syncs inside the run, so it trains exactly like offline (s=inf): same generator, same samples.\n`
      : "",
    "GRPO runs generate in a worker thread (its own embedded engine); staleness 1 and 2 use the decoupled PPO objective. " +
      "Wall times include the held-out evaluations, which every setting runs at the same steps; the async worker keeps generating while the trainer evaluates.",
    "",
    "| setting | judged final failure rate | curve's last failure rate | reward, last third | train+gen s (no eval) | wall s to last step | wall s | wall s to first crossing | CPU s per wall s | rollout worker busy s | trainer waited s |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...outcomes.map((o) => {
      const tail = tailReward(o);
      const reward = o.setting.rewardKind === null ? "-" : `${fmt(tail.mean)} ± ${fmt(tail.se)}`;
      return `| ${o.setting.label} | ${fmt(final(o))} | ${fmt(curveFinal(o))} | ${reward} | ${fmt(o.result.records.at(-1)?.elapsedS, 0)} | ${fmt(toEnd(o), 0)} | ${fmt(o.wallS, 0)} | ${o.setting.algo === "grpo" && comparisonOf(o)?.target != null ? fmt(timeToReward(o, comparisonOf(o)?.target as number), 0) : "-"} | ${fmt(o.usage?.cpuPerWall, 2)} | ${fmt(o.usage?.workerBusyS, 0)} | ${fmt(o.usage?.trainerWaitS, 0)} |`;
    }),
    "",
    "![failure rate vs time](rl-failure.svg)",
    "",
    "![reward vs time](rl-reward.svg)",
    "",
  ].join("\n");
  await writeFile("bench/results/rl.md", md);
  console.log(JSON.stringify(figures, null, 2));
}

await main();
