import { batchAt } from "../../data/index.ts";
import type { Recipe } from "../../recipe/index.ts";
import type { RolloutBatch, RolloutSource } from "../../rollout/rollout-source.ts";
import type { TrainingData } from "../training-data.ts";
import type { StepFigures, TrainedStep } from "./objective.ts";

/**
 * The scored groups of step `step`'s prompts (the data order of `data.seed`); undefined when the run was cancelled
 * before all of them were sampled, so the step trains on nothing.
 */
export async function stepRollouts(
  source: RolloutSource,
  recipe: Recipe,
  data: TrainingData,
  step: number,
  signal?: AbortSignal,
): Promise<RolloutBatch | undefined> {
  const count = Math.max(1, data.prompts.length);
  const tasks = batchAt(step, recipe.trainer.promptsPerStep, count, recipe.data.seed).map(
    (i) => data.prompts[i],
  );
  let batch: RolloutBatch;
  try {
    batch = await source.next(step, tasks, signal);
  } catch (error) {
    if (signal?.aborted) return undefined;
    throw error;
  }
  if (signal?.aborted && batch.groups.length < tasks.length) return undefined;
  return batch;
}

/** The figures of a step's rollouts: mean reward, pass share, the generator's step and how far it lags the policy. */
export function rolloutFigures(
  step: number,
  rollouts: RolloutBatch,
): Pick<StepFigures, "reward" | "accuracy" | "generatorStep" | "staleness" | "generatedTokens"> {
  const rewards = rollouts.groups.flatMap((g) => g.rewards);
  const passed = rollouts.groups.flatMap((g) => g.passed);
  return {
    reward: rewards.length > 0 ? rewards.reduce((a, b) => a + b, 0) / rewards.length : 0,
    accuracy: passed.length > 0 ? passed.filter(Boolean).length / passed.length : 0,
    generatorStep: rollouts.generatorStep,
    staleness: step - 1 - rollouts.generatorStep,
    generatedTokens: rollouts.generatedTokens,
  };
}

/** A step's record with the figures its sampling measured (a teacher run's NDR and teaching tokens) beside the engine's. */
export function withRolloutExtra(record: TrainedStep, rollouts: RolloutBatch): TrainedStep {
  return rollouts.extra ? { ...record, extra: { ...rollouts.extra, ...record.extra } } : record;
}
