import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  type InferenceEngine,
  InvalidInputError,
  type StepMetrics,
  type TrainEngine,
  type WeightSource,
} from "@arc/core";
import { stringify } from "yaml";
import { dpoBatch } from "../algo/dpo-batch.ts";
import { grpoBatch } from "../algo/grpo-batch.ts";
import { scheduledSftBatch } from "../algo/sft-batch.ts";
import { batchAt } from "../data/index.ts";
import { evaluate } from "../eval/index.ts";
import { loadRecipe, type Recipe } from "../recipe/index.ts";
import { DEFAULT_MIN_JUDGE_SCORED_SHARE, type GroupReward, judgeCoverageShortfall } from "../reward/index.ts";
import { EngineRolloutSource } from "../rollout/engine-rollout-source.ts";
import type { RolloutBatch, RolloutSource } from "../rollout/rollout-source.ts";
import { SyncRolloutSource, workflowSampler } from "../rollout/sync-rollout-source.ts";
import { openTeacherRun } from "../teach/teacher-run.ts";
import { buildReward } from "./build-reward.ts";
import type { EngineChoice, EngineFactory } from "./engine-factory.ts";
import { grpoUpdates } from "./grpo-updates.ts";
import { metricsChartSvg } from "./metrics-chart.ts";
import { RunDir } from "./run-dir.ts";
import type { RunHooks, RunResult, RunState, StepRecord } from "./run-types.ts";
import { hasSftData, loadTrainingData, type TrainingData } from "./training-data.ts";

/** Creates the rollout source of an async run (see `rollout/async-rollout-source.ts`); injected so this file stays engine-free. */
export type AsyncSourceFactory = (args: {
  recipe: Recipe;
  generatorDir: string;
  generatorStep: number;
  data: TrainingData;
}) => Promise<RolloutSource>;

/** Options shared by `startRun` and `resumeRun`. */
export interface RunOptions {
  /** Where runs live (default `.arc/runs`). */
  runsDir?: string;
  /** Constructs the engines (the CLI passes the embedded one from `@arc/rl/embedded`). */
  factory: EngineFactory;
  /** Needed for recipes with `trainer.asyncRollouts: true`. */
  asyncSource?: AsyncSourceFactory;
  hooks?: RunHooks;
  /** Aborting stops the run after the current step with a clean checkpoint and status `cancelled`. */
  signal?: AbortSignal;
}

/** Per-run state a checkpoint carries beyond the train engine's own (`run_state.json`). */
interface CheckpointRunState {
  step: number;
  generatorStep: number;
  /** `base`: the starting model; `policy`: this checkpoint; `generator`: the `generator/` folder beside it. */
  generator: "base" | "policy" | "generator";
  elapsedS: number;
}

/** True when a process with this pid exists (a run killed with -9 leaves a dead pid in state.json). */
function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** A new run id: recipe name, UTC time, random suffix. */
export function newRunId(name: string): string {
  const time = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  return `${name.replace(/[^A-Za-z0-9_-]/g, "-")}-${time}-${randomBytes(2).toString("hex")}`;
}

/** Starts a run of `recipe` in `<runsDir>/<runId>/` and trains it to the end (or until cancelled). */
export async function startRun(recipe: Recipe, options: RunOptions & { runId?: string }): Promise<RunResult> {
  const runId = options.runId ?? newRunId(recipe.name);
  const dir = new RunDir(resolve(options.runsDir ?? ".arc/runs", runId));
  await dir.create();
  await writeFile(dir.recipePath, stringify(recipe));
  await writeFile(dir.metricsPath, "");
  const now = new Date().toISOString();
  const state: RunState = {
    runId,
    status: "running",
    step: 0,
    totalSteps: recipe.trainer.steps,
    lastCheckpoint: null,
    startedAt: now,
    updatedAt: now,
    pid: process.pid,
  };
  await dir.writeState(state);
  return execute(recipe, dir, state, null, options);
}

/** Continues a run from its last checkpoint with the same data order and sampling seeds. */
export async function resumeRun(runId: string, options: RunOptions): Promise<RunResult> {
  const dir = new RunDir(resolve(options.runsDir ?? ".arc/runs", runId));
  const state = await dir.readState();
  const recipe = await loadRecipe(dir.recipePath);
  if (state.status === "completed") {
    return {
      runId,
      dir: dir.dir,
      status: "completed",
      step: state.step,
      lastCheckpoint: state.lastCheckpoint,
      records: await dir.readMetrics(),
    };
  }
  if (state.status === "running" && state.pid !== process.pid && processAlive(state.pid)) {
    throw new InvalidInputError(
      `run ${runId} is still running (pid ${state.pid}); cancel it before resuming`,
      {
        field: "runId",
      },
    );
  }
  let checkpoint: CheckpointRunState | null = null;
  if (state.lastCheckpoint) {
    checkpoint = JSON.parse(await readFile(join(dir.dir, state.lastCheckpoint, "run_state.json"), "utf8"));
  }
  const resumed: RunState = {
    ...state,
    status: "running",
    step: checkpoint?.step ?? 0,
    pid: process.pid,
    updatedAt: new Date().toISOString(),
    error: undefined,
  };
  await dir.writeState(resumed);
  return execute(recipe, dir, resumed, checkpoint, options);
}

/** A teacher run's file of what labelling its SFT data measured (`TeacherRun.summary`). */
export const TEACHING_DATA_FILE = "teaching.json";

/** The folder, inside a run's, of its SFT warm-up run. */
export const SFT_WARM_UP_RUN = "sft-warm-up";

/**
 * The recipe's SFT warm-up as a run of its own in `<run>/sft-warm-up/`: started, resumed from its last checkpoint,
 * or read when it completed. Resolves to its last checkpoint, or null when it was cancelled before ending.
 */
async function sftWarmUpModel(
  recipe: Recipe,
  dir: RunDir,
  options: RunOptions,
): Promise<{ modelDir: string | null; result: RunResult }> {
  const warmUp = recipe.sftWarmUp as NonNullable<Recipe["sftWarmUp"]>;
  const warm: Recipe = {
    ...recipe,
    name: `${recipe.name}-${SFT_WARM_UP_RUN}`,
    sftWarmUp: undefined,
    trainer: {
      ...recipe.trainer,
      algorithm: "sft",
      steps: warmUp.steps,
      learningRate: warmUp.learningRate,
      promptsPerStep: warmUp.promptsPerStep,
      warmupSteps: 0,
      decaySteps: 0,
      asyncRollouts: false,
      checkpointEvery: warmUp.steps,
      evalEvery: warmUp.steps,
    },
  };
  // its checkpoints are not the run's: a hook that registers a run's final checkpoint must not take them
  const hooks: RunHooks = {
    onStep: options.hooks?.onStep,
    onCheckpoint: (info) => options.hooks?.onCheckpoint?.({ ...info, final: false }),
  };
  const sub = { ...options, runsDir: dir.dir, hooks };
  const result = existsSync(join(dir.dir, SFT_WARM_UP_RUN, "state.json"))
    ? await resumeRun(SFT_WARM_UP_RUN, sub)
    : await startRun(warm, { ...sub, runId: SFT_WARM_UP_RUN });
  const done = result.status === "completed" && result.lastCheckpoint !== null;
  return { modelDir: done ? join(result.dir, result.lastCheckpoint as string) : null, result };
}

/**
 * Saves the policy for a server that takes LoRA adapters: each call writes a checkpoint (its `adapter/` in PEFT's
 * layout) under a temporary folder, keeping the two newest (the server may still sample from the previous one).
 */
function adapterSnapshots(train: TrainEngine): {
  take: () => Promise<WeightSource>;
  remove: () => Promise<void>;
} {
  const kept: string[] = [];
  let root: string | undefined;
  let count = 0;
  return {
    async take() {
      root ??= await mkdtemp(join(tmpdir(), "arc-adapters-"));
      const dir = join(root, `policy-${++count}`);
      await train.save(dir);
      kept.push(dir);
      while (kept.length > 2) await rm(kept.shift() as string, { recursive: true, force: true });
      return { kind: "checkpoint", dir };
    },
    remove: async () => {
      if (root) await rm(root, { recursive: true, force: true });
    },
  };
}

/** A run's freshly initialised starting model, in `<run>/init/` (written once; a resumed run finds it there). */
async function initialModel(
  init: NonNullable<Recipe["model"]["init"]>,
  dir: RunDir,
  factory: EngineFactory,
): Promise<string> {
  const path = join(dir.dir, "init");
  if (!existsSync(join(path, "config.json"))) await factory.initModel(path, init.size, init.seed);
  return path;
}

async function execute(
  recipe: Recipe,
  dir: RunDir,
  state: RunState,
  checkpoint: CheckpointRunState | null,
  options: RunOptions,
): Promise<RunResult> {
  const { factory, hooks, signal } = options;
  const t = recipe.trainer;
  if (recipe.generator.api === "sglang" && recipe.generator.weightSync === "lora")
    throw new InvalidInputError(
      "generator.api: sglang takes weightSync disk; LoRA adapters are pushed through vLLM's /v1/load_lora_adapter (api completions)",
      { field: "generator.api" },
    );
  if (recipe.generator.url && recipe.generator.weightSync === "lora" && !recipe.engine.lora)
    throw new InvalidInputError(
      "generator.weightSync: lora pushes LoRA adapters; set engine.lora to train them",
      {
        field: "generator.weightSync",
      },
    );
  let modelDir = recipe.model.init
    ? await initialModel(recipe.model.init, dir, factory)
    : resolve(recipe.model.path);
  // a judge-rewarded run on reference-free production prompts with no corrections has nothing to warm up on
  const warmUp = recipe.sftWarmUp && (recipe.reward.kind !== "judge" || (await hasSftData(recipe)));
  if (recipe.sftWarmUp && !warmUp)
    console.warn(
      `${recipe.name}: SFT warm-up skipped: ${recipe.data.prompts} has no reference answer and the run no correction to learn`,
    );
  if (warmUp) {
    let warmed: Awaited<ReturnType<typeof sftWarmUpModel>>;
    try {
      warmed = await sftWarmUpModel(recipe, dir, options);
    } catch (error) {
      await dir.writeState({ ...state, status: "failed", error: `SFT warm-up: ${(error as Error).message}` });
      throw error;
    }
    if (!warmed.modelDir) {
      const status = warmed.result.status === "failed" ? "failed" : "cancelled";
      await dir.writeState({ ...state, status, updatedAt: new Date().toISOString() });
      return {
        runId: state.runId,
        dir: dir.dir,
        status,
        step: state.step,
        lastCheckpoint: null,
        records: [],
      };
    }
    modelDir = warmed.modelDir;
  }
  const checkpointDir = state.lastCheckpoint ? join(dir.dir, state.lastCheckpoint) : null;
  const records = await dir.truncateMetrics(checkpoint?.step ?? -1);
  if (recipe.cluster.address && recipe.engine.kind !== "torch")
    throw new Error("cluster.address: only the torch engine runs on a Ray cluster; set engine.kind to torch");
  const engine: EngineChoice = { ...recipe.engine, cluster: recipe.cluster };
  const renderExample = await factory.renderExample(modelDir);
  const teacher = recipe.teaching ? await openTeacherRun(recipe, factory, engine) : undefined;
  if (teacher && Object.keys(teacher.summary).length > 0)
    await writeFile(join(dir.dir, TEACHING_DATA_FILE), `${JSON.stringify(teacher.summary, null, 2)}\n`);
  const data = teacher ? teacher.data : await loadTrainingData(recipe, renderExample);
  const { reward, judgeUsage } = teacher
    ? { reward: undefined, judgeUsage: undefined }
    : await buildReward(recipe.reward);
  const sample = teacher ? teacher.sampler : workflowSampler(reward as GroupReward, t.workflow);
  // a resumed run restores its own checkpoint's training state; a new run starts a fresh optimizer on the model,
  // even when the model is another run's checkpoint
  const train = await factory.trainEngine(
    checkpointDir ?? modelDir,
    {
      learningRate: t.learningRate,
      // the engine's schedule counts optimizer updates, the recipe's counts steps
      warmupSteps: t.warmupSteps * t.ppoEpochs,
      decaySteps: t.decaySteps * t.ppoEpochs,
      minLearningRate: t.minLearningRate,
      weightDecay: t.weightDecay,
      maxGradNorm: t.maxGradNorm,
      trainThreads: t.trainThreads,
      engine,
    },
    { resume: checkpointDir !== null },
  );
  const evalEngine =
    data.evalTasks.length > 0
      ? await factory.inferenceEngine(checkpointDir ?? modelDir, 0, engine)
      : undefined;
  let source: RolloutSource | undefined;
  /** The inference engine of synchronous rollouts, closed with the run. */
  let generator: InferenceEngine | undefined;
  const generatorStep = checkpoint?.generatorStep ?? 0;
  const generatorDir =
    !checkpoint || checkpoint.generator === "base"
      ? modelDir
      : checkpoint.generator === "policy"
        ? (checkpointDir as string)
        : join(checkpointDir as string, "generator");
  if (t.algorithm !== "sft") {
    const server = recipe.generator.url ? recipe.generator : undefined;
    if (t.asyncRollouts && (recipe.engine.kind === "torch" || server)) {
      // the torch engine and an inference server sample in their own processes, so rollouts overlap training
      // without a worker thread
      source = new EngineRolloutSource({
        engine: await factory.inferenceEngine(generatorDir, generatorStep, { ...engine, server }),
        trainer: t,
        prompts: data.prompts,
        dataSeed: recipe.data.seed,
        reward: reward as GroupReward,
        generatorStep,
      });
    } else if (t.asyncRollouts) {
      if (!options.asyncSource)
        throw new Error("trainer.asyncRollouts: this caller passed no asyncSource factory");
      source = await options.asyncSource({ recipe, generatorDir, generatorStep, data });
    } else {
      generator = await factory.inferenceEngine(generatorDir, generatorStep, { ...engine, server });
      source = new SyncRolloutSource(generator, {
        n: t.samplesPerPrompt,
        temperature: t.temperature,
        maxTokens: t.maxTokens,
        seed: t.seed,
        syncInterval: t.algorithm === "grpo" ? 1 : t.syncInterval,
        sample,
        generatorStep,
        initialWeights:
          checkpoint?.generator === "generator" ? { kind: "checkpoint", dir: generatorDir } : undefined,
        onSync: t.algorithm === "dpo" && t.syncReference ? () => train.syncReference() : undefined,
      });
    }
  }

  const snapshots =
    recipe.generator.url && recipe.generator.weightSync === "lora" ? adapterSnapshots(train) : undefined;
  /** The policy as the generator takes it: with LoRA pushed to a server, a saved checkpoint with its adapter/. */
  const policyWeights = snapshots ? snapshots.take : () => train.weights();
  let elapsed = checkpoint?.elapsedS ?? 0;
  let lastEval: number | undefined = [...records]
    .reverse()
    .find((r) => r.evalFailureRate !== undefined)?.evalFailureRate;
  /** The held-out evaluation after `step`: the policy's answers, or for a teacher the student it teaches. */
  const runEval = async (
    step: number,
  ): Promise<
    | { evalAccuracy: number; evalFailureRate: number; evalS: number; evalExtra: Record<string, number> }
    | undefined
  > => {
    if (!evalEngine) return undefined;
    const began = performance.now();
    if (step > 0) await evalEngine.setWeights(step, await train.weights());
    const result = teacher
      ? await teacher.evaluate(evalEngine, signal)
      : await evaluate(evalEngine, data.evalTasks, { maxTokens: t.maxTokens }).then((r) => ({
          evalAccuracy: r.accuracy,
          evalFailureRate: r.failureRate,
          extra: {},
        }));
    lastEval = result.evalFailureRate;
    return {
      evalAccuracy: result.evalAccuracy,
      evalFailureRate: result.evalFailureRate,
      evalS: (performance.now() - began) / 1000,
      evalExtra: result.extra,
    };
  };

  const saveCheckpoint = async (step: number, final: boolean) => {
    const rel = dir.checkpoint(step);
    const abs = join(dir.dir, rel);
    await rm(abs, { recursive: true, force: true });
    await train.save(abs);
    const gStep = source?.generatorStep() ?? step;
    const generator: CheckpointRunState["generator"] =
      gStep === 0 ? "base" : gStep === step ? "policy" : "generator";
    if (generator === "generator") {
      const weights = source?.generatorWeights();
      if (!weights)
        throw new Error(`checkpoint ${step}: the generator's weights (step ${gStep}) are not held`);
      if (weights.kind === "checkpoint") await cp(weights.dir, join(abs, "generator"), { recursive: true });
      else await factory.saveWeights(join(abs, "generator"), weights, abs);
    }
    const runState: CheckpointRunState = { step, generatorStep: gStep, generator, elapsedS: elapsed };
    await writeFile(join(abs, "run_state.json"), `${JSON.stringify(runState, null, 2)}\n`);
    state.lastCheckpoint = rel;
    state.updatedAt = new Date().toISOString();
    await dir.writeState(state);
    await hooks?.onCheckpoint?.({ runId: state.runId, step, dir: abs, evalFailureRate: lastEval, final });
  };

  const finish = async (status: RunState["status"], error?: string): Promise<RunResult> => {
    await source?.close();
    await generator?.close?.();
    await snapshots?.remove();
    await evalEngine?.close?.();
    await teacher?.close();
    await train.close?.();
    state.status = status;
    state.updatedAt = new Date().toISOString();
    if (error) state.error = error;
    await dir.writeState(state);
    await writeFile(dir.chartPath, metricsChartSvg(records, `${state.runId} (${t.algorithm})`));
    return {
      runId: state.runId,
      dir: dir.dir,
      status,
      step: state.step,
      lastCheckpoint: state.lastCheckpoint,
      records,
    };
  };

  try {
    if (!checkpoint && records.length === 0) {
      const { evalExtra, ...ev } = (await runEval(0)) ?? {};
      const zero: StepRecord = {
        step: 0,
        algorithm: t.algorithm,
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
      records.push(zero);
      await dir.appendMetrics(zero);
    }
    for (let step = state.step + 1; step <= t.steps; step++) {
      if (signal?.aborted) {
        if (state.step > 0 && state.lastCheckpoint !== dir.checkpoint(state.step))
          await saveCheckpoint(state.step, false);
        return await finish("cancelled");
      }
      const began = performance.now();
      const tasks = batchAt(step, t.promptsPerStep, Math.max(1, data.prompts.length), recipe.data.seed).map(
        (i) => data.prompts[i],
      );
      let record: Omit<StepRecord, "elapsedS" | "tokensPerSecond">;
      if (t.algorithm === "sft") {
        const m = await train.step(
          scheduledSftBatch(
            data.examples,
            renderExample,
            recipe.data.skipSteps + step,
            t.promptsPerStep,
            recipe.data,
          ),
          {
            kind: "sft",
          },
        );
        record = stepRecord(
          step,
          t.algorithm,
          m,
          null,
          { used: t.promptsPerStep, skipped: 0 },
          step - 1,
          0,
          0,
        );
      } else {
        let batch: RolloutBatch;
        try {
          batch = await (source as RolloutSource).next(step, tasks, signal);
        } catch (error) {
          if (signal?.aborted) continue;
          throw error;
        }
        if (signal?.aborted && batch.groups.length < tasks.length) continue;
        record = await trainOnRollouts(step, recipe, train, batch, data);
      }
      await source?.afterStep(step, policyWeights);
      elapsed += (performance.now() - began) / 1000;
      const seconds = (performance.now() - began) / 1000;
      const due = (step % t.evalEvery === 0 && step >= (t.evalFrom ?? t.evalEvery)) || step === t.steps;
      const { evalExtra, ...ev } = (due ? await runEval(step) : undefined) ?? {};
      // a judge reward's spending so far, in every record (the judge's own calls, not the evaluations')
      const judge = judgeUsage?.();
      const full: StepRecord = {
        ...record,
        extra: {
          ...record.extra,
          ...(judge
            ? {
                judgeCalls: judge.calls,
                judgeTokens: judge.tokens,
                judgeScored: judge.scored,
                judgeUnjudged: judge.unjudged,
              }
            : {}),
          ...evalExtra,
        },
        ...ev,
        elapsedS: elapsed,
        tokensPerSecond: record.tokens / seconds,
      };
      records.push(full);
      await dir.appendMetrics(full);
      state.step = step;
      state.updatedAt = new Date().toISOString();
      await dir.writeState(state);
      await hooks?.onStep?.(full, state);
      const starved =
        step === t.steps && judge && t.algorithm !== "sft"
          ? judgeCoverageShortfall(
              judge,
              recipe.reward.judge?.minScoredShare ?? DEFAULT_MIN_JUDGE_SCORED_SHARE,
            )
          : undefined;
      if (starved) throw new Error(starved);
      if (step % t.checkpointEvery === 0 || step === t.steps) await saveCheckpoint(step, step === t.steps);
    }
    return await finish("completed");
  } catch (error) {
    await finish("failed", (error as Error).message).catch(() => undefined);
    throw error;
  }
}

function stepRecord(
  step: number,
  algorithm: Recipe["trainer"]["algorithm"],
  m: StepMetrics | null,
  rollouts: {
    reward: number;
    accuracy: number;
    advantageMean: number | null;
    advantageStd: number | null;
  } | null,
  counts: { used: number; skipped: number },
  generatorStep: number,
  staleness: number,
  generatedTokens: number,
): Omit<StepRecord, "elapsedS" | "tokensPerSecond"> {
  return {
    step,
    algorithm,
    loss: m && Number.isFinite(m.loss) ? m.loss : null,
    reward: rollouts?.reward ?? null,
    accuracy: rollouts?.accuracy ?? null,
    advantageMean: rollouts?.advantageMean ?? null,
    advantageStd: rollouts?.advantageStd ?? null,
    used: counts.used,
    skipped: counts.skipped,
    gradNorm: m?.gradNorm ?? null,
    learningRate: m?.learningRate ?? null,
    tokens: (m?.tokens ?? 0) + generatedTokens,
    staleness,
    generatorStep,
    extra: m?.extra ?? {},
  };
}

function meanStd(values: readonly number[]): [number | null, number | null] {
  if (values.length === 0) return [null, null];
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const std = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
  return [mean, std];
}

/** One DPO or GRPO optimizer step on a batch of scored groups. */
async function trainOnRollouts(
  step: number,
  recipe: Recipe,
  train: TrainEngine,
  rollouts: RolloutBatch,
  data: TrainingData,
): Promise<Omit<StepRecord, "elapsedS" | "tokensPerSecond">> {
  const record = await trainOnGroups(step, recipe, train, rollouts, data);
  return rollouts.extra ? { ...record, extra: { ...rollouts.extra, ...record.extra } } : record;
}

/** The DPO or GRPO update of `trainOnRollouts`. */
async function trainOnGroups(
  step: number,
  recipe: Recipe,
  train: TrainEngine,
  rollouts: RolloutBatch,
  data: TrainingData,
): Promise<Omit<StepRecord, "elapsedS" | "tokensPerSecond">> {
  const t = recipe.trainer;
  const rewards = rollouts.groups.flatMap((g) => g.rewards);
  const passed = rollouts.groups.flatMap((g) => g.passed);
  const reward = rewards.length > 0 ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0;
  const accuracy = passed.length > 0 ? passed.filter(Boolean).length / passed.length : 0;
  const staleness = step - 1 - rollouts.generatorStep;
  if (t.algorithm === "dpo") {
    const mixCount =
      data.preferences.length > 0 ? Math.round(recipe.data.preferenceMix * t.promptsPerStep) : 0;
    const mixed =
      mixCount > 0
        ? batchAt(step, mixCount, data.preferences.length, recipe.data.seed + 1).map(
            (i) => data.preferences[i],
          )
        : [];
    const out = dpoBatch(rollouts.groups, mixed);
    const pairs = out.sampledPairs + out.mixedPairs;
    const m =
      pairs > 0
        ? await train.step(out.batch, {
            kind: "dpo",
            beta: t.beta,
            loss: t.loss,
            entropyCoef: t.entropyCoef,
            nllCoef: t.nllCoef,
          })
        : null;
    return stepRecord(
      step,
      "dpo",
      m,
      { reward, accuracy, advantageMean: out.meanMargin, advantageStd: null },
      { used: pairs, skipped: out.ties },
      rollouts.generatorStep,
      staleness,
      rollouts.generatedTokens,
    );
  }
  const out = grpoBatch(
    rollouts.groups,
    t.normalization,
    t.decoupled || (staleness > 0 && t.temperature === 1),
  );
  const m =
    out.groups > 0
      ? await grpoUpdates(
          train,
          out.batch,
          {
            kind: "grpo",
            clipEpsilon: t.clipEpsilon,
            klCoef: t.klCoef,
            entropyCoef: t.entropyCoef,
            aggregation: t.normalization === "dr-grpo" ? "dr-grpo" : "token",
            decoupled: t.decoupled,
            behaviourWeightCap: t.behaviourWeightCap,
          },
          t.ppoEpochs,
        )
      : null;
  const [advantageMean, advantageStd] = meanStd(out.advantages);
  return stepRecord(
    step,
    "grpo",
    m,
    { reward, accuracy, advantageMean, advantageStd },
    { used: out.groups, skipped: out.uniform },
    rollouts.generatorStep,
    staleness,
    rollouts.generatedTokens,
  );
}
