import { join } from "node:path";
import type { TrainEngine, WeightSource } from "@arc/core";
import type { Recipe } from "../recipe/index.ts";
import type { RolloutSource } from "../rollout/rollout-source.ts";
import { adapterSnapshots } from "./adapter-snapshots.ts";
import type { EngineChoice, EngineFactory } from "./engine-factory.ts";
import { HeldOutEvaluation } from "./held-out-evaluation.ts";
import { mixRehearsal, rehearsalExamples } from "./rehearsal.ts";
import { type AsyncSourceFactory, openRolloutSource } from "./rollout-sources.ts";
import { type CheckpointRunState, checkpointWriter, generatorAtStart } from "./run-checkpoints.ts";
import type { RunDir } from "./run-dir.ts";
import type { RunHooks, RunState, StepRecord } from "./run-types.ts";
import { algorithmStrategy } from "./strategies/algorithm-strategies.ts";
import type { Objective } from "./strategies/objective.ts";
import { recipeSubject } from "./strategies/recipe-subject.ts";
import type { RunSubject } from "./strategies/run-subject.ts";
import { teacherSubject } from "./strategies/teacher-subject.ts";

/** What opening a run takes. */
export interface OpenRunOptions {
  recipe: Recipe;
  dir: RunDir;
  /** The run's state, which its checkpoints move on. */
  state: RunState;
  /** The starting model (after any SFT warm-up). */
  modelDir: string;
  /** The checkpoint a resumed run continues from. */
  checkpoint: CheckpointRunState | null;
  /** The records kept so far (a resumed run's up to its checkpoint). */
  records: readonly StepRecord[];
  factory: EngineFactory;
  /** Makes the worker-thread rollout source of an embedded asynchronous GRPO run. */
  asyncSource?: AsyncSourceFactory;
  /** `onCheckpoint` receives each checkpoint. */
  hooks?: RunHooks;
  /** Aborts the held-out evaluations of a cancelled run. */
  signal?: AbortSignal;
}

/** A run's engines and strategies, open for its training loop. */
export interface OpenRun {
  /** What the run trains for: its data, sampling and held-out judging (the recipe's own, or a teacher's). */
  subject: RunSubject;
  /** The algorithm's step. */
  objective: Objective;
  /** The rollout source of an algorithm that samples; the loop offers it the policy after every step. */
  rollouts: RolloutSource | undefined;
  /** Judges the policy on the held-out tasks. */
  evaluation: HeldOutEvaluation;
  /** The policy as the generator takes it: with LoRA pushed to a server, a saved checkpoint with its adapter/. */
  policyWeights(): WeightSource | Promise<WeightSource>;
  /** Writes step `step`'s checkpoint (`final` for the run's last step). */
  saveCheckpoint(step: number, final: boolean, elapsedS: number): Promise<void>;
  /** Closes every engine of the run. */
  close(): Promise<void>;
}

/** The train engine of a run: a resumed run's own checkpoint with its optimizer, or a fresh optimizer on the model. */
function openTrainEngine(
  options: OpenRunOptions,
  engine: EngineChoice,
  checkpointDir: string | null,
  updatesPerStep: number,
): Promise<TrainEngine> {
  const t = options.recipe.trainer;
  // a new run starts a fresh optimizer on the model, even when the model is another run's checkpoint
  return options.factory.trainEngine(
    checkpointDir ?? options.modelDir,
    {
      learningRate: t.learningRate,
      // the engine's schedule counts optimizer updates, the recipe's counts steps
      warmupSteps: t.warmupSteps * updatesPerStep,
      decaySteps: t.decaySteps * updatesPerStep,
      minLearningRate: t.minLearningRate,
      weightDecay: t.weightDecay,
      maxGradNorm: t.maxGradNorm,
      trainThreads: t.trainThreads,
      engine,
    },
    { resume: checkpointDir !== null },
  );
}

/**
 * Opens a run: its subject (the recipe's data and reward, or a teacher's), its train engine, its held-out evaluation
 * and its algorithm's objective with the rollout source the algorithm asks for.
 */
export async function openRun(options: OpenRunOptions): Promise<OpenRun> {
  const { recipe, dir, state, factory, modelDir } = options;
  if (recipe.cluster.address && recipe.engine.kind !== "torch")
    throw new Error("cluster.address: only the torch engine runs on a Ray cluster; set engine.kind to torch");
  const engine: EngineChoice = { ...recipe.engine, cluster: recipe.cluster };
  const checkpointDir = state.lastCheckpoint ? join(dir.dir, state.lastCheckpoint) : null;
  const renderExample = await factory.renderExample(modelDir);
  const subject = recipe.teaching
    ? await teacherSubject(recipe, factory, engine, dir.dir)
    : await recipeSubject(recipe, renderExample);
  if (recipe.data.rehearsal && recipe.data.rehearsalShare > 0) {
    const rehearsal = await rehearsalExamples(recipe.data.rehearsal, dir.dir, () =>
      factory.inferenceEngine(modelDir, 0, engine),
    );
    subject.data.examples = mixRehearsal(subject.data.examples, rehearsal, recipe.data.rehearsalShare);
  }
  const strategy = algorithmStrategy(recipe.trainer);
  const train = await openTrainEngine(
    options,
    engine,
    checkpointDir,
    strategy.updatesPerStep(recipe.trainer),
  );
  const evaluation = new HeldOutEvaluation(
    subject.data.evalTasks.length > 0
      ? await factory.inferenceEngine(checkpointDir ?? modelDir, 0, engine)
      : undefined,
    train,
    subject,
    options.records,
    options.signal,
  );
  let rollouts: RolloutSource | undefined;
  const generator = generatorAtStart(options.checkpoint, checkpointDir, modelDir);
  const objective = await strategy.open({
    recipe,
    trainer: recipe.trainer,
    train,
    data: subject.data,
    renderExample,
    openRollouts: async (request) => {
      const context = { recipe, factory, engine, subject, generator, asyncSource: options.asyncSource };
      rollouts = await openRolloutSource(context, request);
      return rollouts;
    },
  });
  const snapshots =
    recipe.generator.url && recipe.generator.weightSync === "lora" ? adapterSnapshots(train) : undefined;
  return {
    subject,
    objective,
    rollouts,
    evaluation,
    policyWeights: snapshots ? snapshots.take : () => train.weights(),
    saveCheckpoint: checkpointWriter({
      dir,
      state,
      train,
      factory,
      rollouts: () => rollouts,
      evalFailureRate: () => evaluation.lastFailureRate,
      hooks: options.hooks,
    }),
    async close() {
      await rollouts?.close();
      await snapshots?.remove();
      await evaluation.close();
      await subject.close();
      await train.close?.();
    },
  };
}
