import { join } from "node:path";
import type { Recipe } from "../../recipe/recipe-schema.ts";
import { RunDir } from "../run-dir.ts";
import type { StepRecord } from "../run-types.ts";
import type { WarmUpPart, WarmUpPartOutcome } from "./warm-up-types.ts";

/** Starts a run of `recipe` (the warm-up's SFT recipe, its part's fields set) until it ends or `signal` stops it. */
export type StartPartRun = (
  recipe: Recipe,
  runId: string,
  hooks: { onStep(record: StepRecord): void },
  signal: AbortSignal,
) => Promise<{ dir: string; status: string; lastCheckpoint: string | null; records: StepRecord[] }>;

/** The warm-up's SFT recipe with a part's steps, schedule, judgements and checkpoints. */
export function partRecipe(warmUp: Recipe, part: WarmUpPart): Recipe {
  return {
    ...warmUp,
    model: { ...warmUp.model, path: part.from, init: undefined },
    data: { ...warmUp.data, evalCount: part.evalCount },
    trainer: {
      ...warmUp.trainer,
      steps: part.steps,
      learningRate: part.learningRate,
      warmupSteps: part.warmupSteps,
      decaySteps: part.decaySteps,
      minLearningRate: part.minLearningRate,
      evalEvery: part.evalEvery,
      evalFrom: part.evalFrom,
      checkpointEvery: part.checkpointEvery,
    },
  };
}

/**
 * Trains a part in this process: a run of the warm-up's SFT recipe, stopped (its step's checkpoint written) after the
 * step `stopAfter` names, at the part's deadline once it has a step, or when `signal` aborts.
 */
export async function trainPartInProcess(
  warmUp: Recipe,
  part: WarmUpPart,
  start: StartPartRun,
  signal?: AbortSignal,
): Promise<WarmUpPartOutcome> {
  const stop = new AbortController();
  const stopAll = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
  let stoppedAtDeadline = false;
  const result = await start(
    partRecipe(warmUp, part),
    part.runId,
    {
      onStep(record) {
        part.onStep(record);
        if (record.step === 0 || stop.signal.aborted) return;
        if (part.stopAfter(record)) stop.abort();
        else if (Date.now() >= part.deadline) {
          stoppedAtDeadline = true;
          stop.abort();
        }
      },
    },
    stopAll,
  );
  return {
    runId: part.runId,
    dir: result.dir,
    records: result.records,
    checkpoint: result.lastCheckpoint === null ? null : join(result.dir, result.lastCheckpoint),
    checkpointAt: (step) => join(result.dir, new RunDir(result.dir).checkpoint(step)),
    stoppedAtDeadline: stoppedAtDeadline && result.status === "cancelled",
  };
}
