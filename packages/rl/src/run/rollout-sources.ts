import type { InferenceEngine, WeightSource } from "@arc/core";
import type { Recipe } from "../recipe/index.ts";
import { EngineRolloutSource } from "../rollout/engine-rollout-source.ts";
import type { RolloutSource } from "../rollout/rollout-source.ts";
import { SyncRolloutSource } from "../rollout/sync-rollout-source.ts";
import type { EngineChoice, EngineFactory } from "./engine-factory.ts";
import type { RolloutRequest } from "./strategies/objective.ts";
import type { RunSubject } from "./strategies/run-subject.ts";
import type { TrainingData } from "./training-data.ts";

/** Creates the rollout source of an async run (see `worker/async-rollout-source.ts`); injected so this file stays engine-free. */
export type AsyncSourceFactory = (args: {
  recipe: Recipe;
  generatorDir: string;
  generatorStep: number;
  data: TrainingData;
}) => Promise<RolloutSource>;

/** The generator a run starts sampling with: the starting model, or a resumed run's checkpointed generator. */
export interface GeneratorStart {
  dir: string;
  /** The policy step of its weights. */
  step: number;
  /** Its weights when they are neither the starting model nor the policy (a resumed semi-online run). */
  weights?: WeightSource;
}

/** What a run's rollout source is made from. */
export interface RolloutSourceContext {
  recipe: Recipe;
  factory: EngineFactory;
  engine: EngineChoice;
  subject: RunSubject;
  generator: GeneratorStart;
  asyncSource?: AsyncSourceFactory;
}

/** `source`, closing the generator engine it samples on when it closes. */
function closingEngine(source: RolloutSource, engine: InferenceEngine): RolloutSource {
  return {
    next: (step, tasks, signal) => source.next(step, tasks, signal),
    afterStep: (step, policy) => source.afterStep(step, policy),
    generatorStep: () => source.generatorStep(),
    generatorWeights: () => source.generatorWeights(),
    async close() {
      await source.close();
      await engine.close?.();
    },
  };
}

/**
 * The rollout source an algorithm asks for: synchronous sampling in the trainer's thread; or asynchronous, in the
 * generator's own process (the torch engine, an inference server) or else in a worker thread.
 */
export async function openRolloutSource(
  context: RolloutSourceContext,
  request: RolloutRequest,
): Promise<RolloutSource> {
  const { recipe, factory, subject, generator } = context;
  const server = recipe.generator.url ? recipe.generator : undefined;
  const engine = { ...context.engine, server };
  if (request.mode === "sync") {
    const t = request.trainer;
    const generatorEngine = await factory.inferenceEngine(generator.dir, generator.step, engine);
    const source = new SyncRolloutSource(generatorEngine, {
      n: t.samplesPerPrompt,
      temperature: t.temperature,
      maxTokens: t.maxTokens,
      seed: t.seed,
      syncInterval: request.syncInterval,
      sample: subject.sample,
      generatorStep: generator.step,
      initialWeights: generator.weights,
      onSync: request.onSync,
    });
    return closingEngine(source, generatorEngine);
  }
  if (recipe.engine.kind === "torch" || server) {
    if (!subject.reward)
      throw new Error("trainer.asyncRollouts: asynchronous rollouts score with the recipe's reward");
    // the torch engine and an inference server sample in their own processes, so rollouts overlap training
    // without a worker thread
    return new EngineRolloutSource({
      engine: await factory.inferenceEngine(generator.dir, generator.step, engine),
      trainer: request.trainer,
      prompts: subject.data.prompts,
      dataSeed: recipe.data.seed,
      reward: subject.reward,
      generatorStep: generator.step,
    });
  }
  if (!context.asyncSource)
    throw new Error("trainer.asyncRollouts: this caller passed no asyncSource factory");
  return context.asyncSource({
    recipe,
    generatorDir: generator.dir,
    generatorStep: generator.step,
    data: subject.data,
  });
}
