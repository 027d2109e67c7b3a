import type { InferenceEngine, Task, WeightSource } from "@arc/core";
import { itemAt } from "../data/index.ts";
import type { GrpoTrainer } from "../recipe/recipe-schema.ts";
import type { GroupReward } from "../reward/index.ts";
import { RolloutController } from "./rollout-controller.ts";
import { type RolloutBatch, type RolloutSource, rolloutBatch } from "./rollout-source.ts";
import { rolloutSeed, sampleGroups } from "./sample-groups.ts";

/** What an `EngineRolloutSource` samples from and how. */
export interface EngineRolloutSourceOptions {
  /** An engine that generates outside this thread (the torch worker process), so sampling overlaps training. */
  engine: InferenceEngine;
  trainer: GrpoTrainer;
  /** The run's prompts, taken in the data order of `dataSeed`. */
  prompts: readonly Task[];
  dataSeed: number;
  reward: GroupReward;
  /** The policy step the engine's weights are (a resumed run's generator step). */
  generatorStep: number;
}

/**
 * Asynchronous rollouts (AReaLite) on an engine that generates in another process: the rollout controller keeps
 * rollouts in flight while the trainer trains, gated by `maxStaleness`, and every optimizer step's policy is handed
 * to the engine as a new weight version; the gate counts from the version the engine has loaded. Each token records
 * the version that produced it.
 */
export class EngineRolloutSource implements RolloutSource {
  private readonly controller: RolloutController;
  private failure: Error | undefined;
  /** The newest version sent to the engine (the rollout gate moves on once the engine has loaded it). */
  private version: number;
  /** The weight update in flight: one at a time, as the trainer keeps only its two newest weight snapshots. */
  private updating: Promise<void> = Promise.resolve();

  constructor(private readonly options: EngineRolloutSourceOptions) {
    const t = options.trainer;
    this.version = options.generatorStep;
    const size = Math.max(1, options.prompts.length);
    this.controller = new RolloutController({
      batchSize: t.promptsPerStep,
      maxStaleness: t.maxStaleness,
      maxConcurrentRollouts: t.maxConcurrentRollouts,
      taskOf: (index) => options.prompts[itemAt(index, size, options.dataSeed)],
      version: options.generatorStep,
      submit: (index, task) => this.rollout(index, task),
    });
    this.controller.pump();
  }

  private rollout(index: number, task: Task): void {
    const t = this.options.trainer;
    sampleGroups(this.options.engine, [task], {
      n: t.samplesPerPrompt,
      temperature: t.temperature,
      maxTokens: t.maxTokens,
      seedOf: () => rolloutSeed(t.seed, task, index),
      reward: this.options.reward,
      workflow: t.workflow,
    }).then(
      ([group]) => this.controller.complete(index, group ?? null),
      (error: Error) => this.fail(new Error(`rollout ${index}: ${error.message}`)),
    );
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.controller.fail(this.failure);
  }

  async next(step: number, _tasks: Task[], signal?: AbortSignal): Promise<RolloutBatch> {
    if (this.failure) throw this.failure;
    const groups = await this.controller.batch(step, signal);
    return rolloutBatch(groups, this.version);
  }

  async afterStep(step: number, policy: () => WeightSource | Promise<WeightSource>): Promise<void> {
    await this.updating;
    if (this.failure) throw this.failure;
    const weights = await policy();
    // the gate counts staleness from the version the engine holds: it moves on once the engine has the weights,
    // while the trainer goes on with its next step
    this.updating = this.options.engine.setWeights(step, weights).then(
      () => this.controller.setVersion(step),
      (error: Error) => this.fail(new Error(`weights of step ${step}: ${error.message}`)),
    );
    this.version = step;
  }

  generatorStep(): number {
    return this.version;
  }

  generatorWeights(): WeightSource | undefined {
    return undefined;
  }

  async close(): Promise<void> {
    this.fail(new Error("the rollout source is closed"));
    await this.updating;
    await this.options.engine.close?.();
  }
}
