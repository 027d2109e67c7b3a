import type { InferenceEngine, Task, WeightSource } from "@arc/core";
import { type SyncInterval, syncDue } from "../algo/sync-schedule.ts";
import type { GroupReward } from "../reward/index.ts";
import type { RolloutBatch, RolloutSource } from "./rollout-source.ts";
import { rolloutSeed, sampleGroups } from "./sample-groups.ts";

/** Options of the synchronous source. */
export interface SyncRolloutSourceOptions {
  n: number;
  temperature: number;
  maxTokens: number;
  seed: number;
  syncInterval: SyncInterval;
  reward: GroupReward;
  /** Single-turn answers or multi-turn episodes (see `sampleGroups`). */
  workflow?: "single-turn" | "multi-turn";
  /** The policy step of the generator's current weights (a resumed run passes its checkpoint's). */
  generatorStep: number;
  /** The generator's weights at construction when they are neither the starting model nor the policy (resume). */
  initialWeights?: WeightSource;
  /** Called when the generator takes the policy (e.g. to sync the reference model too). */
  onSync?: (step: number) => Promise<void>;
}

/**
 * Semi-online generation in the trainer's thread: the generator samples, the trainer trains, and every
 * `syncInterval` steps the generator takes the policy's weights (1 = online, `inf` = offline).
 * Sampling seeds depend on (seed, task, generator step) only, so a resumed run samples exactly the same.
 */
export class SyncRolloutSource implements RolloutSource {
  private step: number;
  private held: WeightSource | undefined;

  constructor(
    private readonly engine: InferenceEngine,
    private readonly options: SyncRolloutSourceOptions,
  ) {
    this.step = options.generatorStep;
    this.held = options.initialWeights;
  }

  async next(_step: number, tasks: Task[], signal?: AbortSignal): Promise<RolloutBatch> {
    const generatorStep = this.step;
    const groups = await sampleGroups(this.engine, tasks, {
      n: this.options.n,
      temperature: this.options.temperature,
      maxTokens: this.options.maxTokens,
      seedOf: (task) => rolloutSeed(this.options.seed, task, generatorStep),
      reward: this.options.reward,
      workflow: this.options.workflow,
      signal,
    });
    const generatedTokens = groups.reduce(
      (a, g) => a + (g.episodes?.flat() ?? g.samples).reduce((b, s) => b + s.outputTokens.length, 0),
      0,
    );
    return { groups, generatorStep, generatedTokens };
  }

  async afterStep(step: number, policy: () => WeightSource | Promise<WeightSource>): Promise<void> {
    if (!syncDue(step, this.options.syncInterval)) {
      return;
    }
    const weights = await policy();
    await this.engine.setWeights(step, weights);
    this.step = step;
    this.held = weights;
    await this.options.onSync?.(step);
  }

  generatorStep(): number {
    return this.step;
  }

  generatorWeights(): WeightSource | undefined {
    return this.held;
  }

  async close(): Promise<void> {}
}
