import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { InvalidInputError } from "@arc/core";
import { stringify } from "yaml";
import { loadRecipe, type Recipe } from "../recipe/index.ts";
import { SFT_WARM_UP_RUN, sftWarmUpRecipe } from "../recipe/sft-warm-up-recipe.ts";
import type { EngineFactory } from "./engine-factory.ts";
import { evalDue } from "./held-out-evaluation.ts";
import { metricsChartSvg } from "./metrics-chart.ts";
import { type OpenRun, openRun } from "./open-run.ts";
import type { AsyncSourceFactory } from "./rollout-sources.ts";
import { type CheckpointRunState, readCheckpointState } from "./run-checkpoints.ts";
import { RunDir } from "./run-dir.ts";
import type { RunHooks, RunResult, RunState, RunStatus, StepRecord } from "./run-types.ts";
import { startRecord, stepRecord } from "./step-records.ts";
import { hasSftData } from "./training-data.ts";
import { plannedSftWarmUp } from "./warm-up/planned-sft-warm-up.ts";

export type { AsyncSourceFactory } from "./rollout-sources.ts";
export { TEACHING_DATA_FILE } from "./strategies/teacher-subject.ts";
export { SFT_WARM_UP_RUN };

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
  const checkpoint = state.lastCheckpoint ? await readCheckpointState(dir, state.lastCheckpoint) : null;
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

/**
 * The recipe's SFT warm-up as a run of its own in `<run>/sft-warm-up/`: started, resumed from its last checkpoint,
 * or read when it completed; a planned one (`budgetS` or `stopAt`) as `plannedSftWarmUp` runs it. Resolves to the
 * checkpoint it hands on, or null when it was cancelled before ending.
 */
async function sftWarmUpModel(
  recipe: Recipe,
  dir: RunDir,
  options: RunOptions,
): Promise<{ modelDir: string | null; status: RunStatus }> {
  const warm = sftWarmUpRecipe(recipe);
  // its checkpoints are not the run's: a hook that registers a run's final checkpoint must not take them
  const hooks: RunHooks = {
    onStep: options.hooks?.onStep,
    onCheckpoint: (info) => options.hooks?.onCheckpoint?.({ ...info, final: false }),
  };
  const sub = { ...options, runsDir: dir.dir, hooks };
  const block = recipe.sftWarmUp;
  if (block?.budgetS !== undefined || block?.stopAt !== undefined)
    return plannedSftWarmUp(
      warm,
      block,
      dir,
      (partRecipe, runId, partHooks, signal) =>
        startRun(partRecipe, {
          ...sub,
          runId,
          signal,
          hooks: {
            ...hooks,
            onStep: async (r, state) => {
              partHooks.onStep(r);
              await hooks.onStep?.(r, state);
            },
          },
        }),
      options.signal,
    );
  const result = existsSync(join(dir.dir, SFT_WARM_UP_RUN, "state.json"))
    ? await resumeRun(SFT_WARM_UP_RUN, sub)
    : await startRun(warm, { ...sub, runId: SFT_WARM_UP_RUN });
  const done = result.status === "completed" && result.lastCheckpoint !== null;
  return { modelDir: done ? join(result.dir, result.lastCheckpoint as string) : null, status: result.status };
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

/** Refuses a generator server that cannot take the weights the recipe pushes. */
function checkGenerator(recipe: Recipe): void {
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
}

/**
 * The model a run trains: the recipe's, freshly initialised weights, or its SFT warm-up's last checkpoint; or the
 * run's result when the warm-up was cancelled or failed, recorded in its state.
 */
async function startingModel(
  recipe: Recipe,
  dir: RunDir,
  state: RunState,
  options: RunOptions,
): Promise<string | RunResult> {
  const modelDir = recipe.model.init
    ? await initialModel(recipe.model.init, dir, options.factory)
    : resolve(recipe.model.path);
  // a judge-rewarded run on reference-free production prompts with no corrections has nothing to warm up on
  const warmUp = recipe.sftWarmUp && (recipe.reward.kind !== "judge" || (await hasSftData(recipe)));
  if (recipe.sftWarmUp && !warmUp)
    console.warn(
      `${recipe.name}: SFT warm-up skipped: ${recipe.data.prompts} has no reference answer and the run no correction to learn`,
    );
  if (!warmUp) return modelDir;
  let warmed: Awaited<ReturnType<typeof sftWarmUpModel>>;
  try {
    warmed = await sftWarmUpModel(recipe, dir, options);
  } catch (error) {
    await dir.writeState({ ...state, status: "failed", error: `SFT warm-up: ${(error as Error).message}` });
    throw error;
  }
  if (warmed.modelDir) return warmed.modelDir;
  const status = warmed.status === "failed" ? "failed" : "cancelled";
  await dir.writeState({ ...state, status, updatedAt: new Date().toISOString() });
  return { runId: state.runId, dir: dir.dir, status, step: state.step, lastCheckpoint: null, records: [] };
}

/** Closes a run's engines, records how it ended in `state.json` and `metrics.svg`, and returns its result. */
async function finishRun(
  run: OpenRun,
  dir: RunDir,
  state: RunState,
  records: StepRecord[],
  algorithm: Recipe["trainer"]["algorithm"],
  status: RunStatus,
  error?: string,
): Promise<RunResult> {
  await run.close();
  state.status = status;
  state.updatedAt = new Date().toISOString();
  if (error) state.error = error;
  await dir.writeState(state);
  await writeFile(dir.chartPath, metricsChartSvg(records, `${state.runId} (${algorithm})`));
  return {
    runId: state.runId,
    dir: dir.dir,
    status,
    step: state.step,
    lastCheckpoint: state.lastCheckpoint,
    records,
  };
}

/**
 * The training loop: from the run's next step to its last, the algorithm's objective trains a step, the generator is
 * offered the policy, the held-out tasks are judged when due, the record and state are written, and a checkpoint
 * when due. A cancelled run checkpoints its last step and stops; a failed one records its error before throwing it.
 */
async function execute(
  recipe: Recipe,
  dir: RunDir,
  state: RunState,
  checkpoint: CheckpointRunState | null,
  options: RunOptions,
): Promise<RunResult> {
  checkGenerator(recipe);
  const modelDir = await startingModel(recipe, dir, state, options);
  if (typeof modelDir !== "string") return modelDir;
  const records = await dir.truncateMetrics(checkpoint?.step ?? -1);
  const run = await openRun({ ...options, recipe, dir, state, modelDir, checkpoint, records });
  const { hooks, signal } = options;
  const t = recipe.trainer;
  const finish = (status: RunStatus, error?: string) =>
    finishRun(run, dir, state, records, t.algorithm, status, error);
  const append = async (record: StepRecord) => {
    records.push(record);
    await dir.appendMetrics(record);
  };
  let elapsedS = checkpoint?.elapsedS ?? 0;
  try {
    if (!checkpoint && records.length === 0)
      await append(startRecord(t.algorithm, await run.evaluation.after(0)));
    for (let step = state.step + 1; step <= t.steps; step++) {
      if (signal?.aborted) {
        if (state.step > 0 && state.lastCheckpoint !== dir.checkpoint(state.step))
          await run.saveCheckpoint(state.step, false, elapsedS);
        return await finish("cancelled");
      }
      const began = performance.now();
      const trained = await run.objective.train(step, signal);
      if (!trained) continue; // cancelled while sampling: the next turn checkpoints and stops
      await run.rollouts?.afterStep(step, run.policyWeights);
      const seconds = (performance.now() - began) / 1000;
      elapsedS += seconds;
      const evaluation = evalDue(t, step) ? await run.evaluation.after(step) : undefined;
      const record = stepRecord(trained, { evaluation, extra: run.subject.stepExtra(), elapsedS, seconds });
      await append(record);
      state.step = step;
      state.updatedAt = new Date().toISOString();
      await dir.writeState(state);
      await hooks?.onStep?.(record, state);
      const shortfall = step === t.steps ? run.subject.finalShortfall() : undefined;
      if (shortfall) throw new Error(shortfall);
      if (step % t.checkpointEvery === 0 || step === t.steps)
        await run.saveCheckpoint(step, step === t.steps, elapsedS);
    }
    return await finish("completed");
  } catch (error) {
    await finish("failed", (error as Error).message).catch(() => undefined);
    throw error;
  }
}
