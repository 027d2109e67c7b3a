import type { InferenceEngine, Task, WeightSource } from "@arc/core";
import { type SyncInterval, syncDue } from "../algo/sync-schedule.ts";
import type { GroupReward } from "../reward/index.ts";
import type { RolloutBatch, RolloutSource } from "./rollout-source.ts";
import { rolloutSeed, sampleGroups } from "./sample-groups.ts";
import type { ScoredGroup } from "./scored-group.ts";

/** How one step's groups are sampled: n samples per task, the seed of each task's samples fixed by the source. */
export interface GroupSamplingOptions {
  n: number;
  temperature: number;
  maxTokens: number;
  seedOf: (task: Task) => number;
  signal?: AbortSignal;
}

/**
 * Samples and scores one step's groups on `engine`: the recipe's workflow and reward (`workflowSampler`), or a
 * teacher run's teachings scored by their student. `extra` holds figures the step's record carries.
 */
export type GroupSampler = (
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: GroupSamplingOptions,
) => Promise<{ groups: ScoredGroup[]; extra?: Record<string, number> }>;

/** The sampler of a recipe's workflow: single-turn answers or multi-turn episodes, scored by `reward`. */
export function workflowSampler(
  reward: GroupReward,
  workflow: "single-turn" | "multi-turn" = "single-turn",
): GroupSampler {
  return async (engine, tasks, options) => ({
    groups: await sampleGroups(engine, tasks, { ...options, reward, workflow }),
  });
}

/** Options of the synchronous source. */
export interface SyncRolloutSourceOptions {
  n: number;
  temperature: number;
  maxTokens: number;
  seed: number;
  syncInterval: SyncInterval;
  /** Samples and scores each step's groups. */
  sample: GroupSampler;
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
    const { groups, extra } = await this.options.sample(this.engine, tasks, {
      n: this.options.n,
      temperature: this.options.temperature,
      maxTokens: this.options.maxTokens,
      seedOf: (task) => rolloutSeed(this.options.seed, task, generatorStep),
      signal,
    });
    const generatedTokens = groups.reduce(
      (a, g) => a + (g.episodes?.flat() ?? g.samples).reduce((b, s) => b + s.outputTokens.length, 0),
      0,
    );
    return { groups, generatorStep, generatedTokens, ...(extra ? { extra } : {}) };
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
