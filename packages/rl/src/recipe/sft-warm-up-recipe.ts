import type { Recipe, SftTrainer, SftWarmUp } from "./recipe-schema.ts";

/** The folder, inside a run's, of its SFT warm-up run. */
export const SFT_WARM_UP_RUN = "sft-warm-up";

/**
 * The learning-rate schedule of `steps` warm-up steps from `learningRate`: a linear ramp of `ramp` steps, then a cosine
 * to the block's `minLearningRate` by the last step, or constant without one.
 */
export function warmUpSchedule(block: SftWarmUp, steps: number, learningRate: number, ramp: number) {
  return {
    learningRate,
    warmupSteps: Math.min(ramp, steps),
    decaySteps: block.minLearningRate === undefined ? 0 : Math.max(1, steps - ramp),
    minLearningRate: block.minLearningRate ?? 0,
  };
}

/**
 * The recipe of a run's SFT warm-up (`sftWarmUp`): the run's model, data and reward, with an SFT trainer block of
 * the warm-up's steps, learning-rate schedule and batch, and the run's shared trainer keys (seed, budget, threads).
 * It takes no key of the run's own algorithm, so it reloads as the SFT recipe it is when the warm-up resumes.
 */
export function sftWarmUpRecipe(recipe: Recipe): Recipe {
  const warmUp = recipe.sftWarmUp;
  if (!warmUp) throw new Error(`${recipe.name}: the recipe has no sftWarmUp`);
  const t = recipe.trainer;
  const trainer: SftTrainer = {
    algorithm: "sft",
    backend: t.backend,
    steps: warmUp.steps,
    promptsPerStep: warmUp.promptsPerStep,
    ...warmUpSchedule(warmUp, warmUp.steps, warmUp.learningRate, warmUp.warmupSteps),
    weightDecay: t.weightDecay,
    maxGradNorm: t.maxGradNorm,
    trainThreads: t.trainThreads,
    maxTokens: t.maxTokens,
    seed: t.seed,
    checkpointEvery: warmUp.steps,
    evalEvery: warmUp.steps,
  };
  return { ...recipe, name: `${recipe.name}-${SFT_WARM_UP_RUN}`, sftWarmUp: undefined, trainer };
}
