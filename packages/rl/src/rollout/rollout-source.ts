import type { Task, WeightSource } from "@arc/core";
import type { ScoredGroup } from "./scored-group.ts";

/** What a rollout source hands the trainer for one optimizer step. */
export interface RolloutBatch {
  groups: ScoredGroup[];
  /** The policy step whose weights generated the oldest of these groups' tokens. */
  generatorStep: number;
  /** Tokens generated for these groups. */
  generatedTokens: number;
  /** Figures of the sampling the step's record carries (a teacher run's NDR and teaching tokens). */
  extra?: Record<string, number>;
}

/** A step's batch of groups: its generator step is the oldest version among them (`version` when there are none). */
export function rolloutBatch(groups: ScoredGroup[], version: number): RolloutBatch {
  const generatorStep = groups.length > 0 ? Math.min(...groups.map((g) => g.versionRange[0])) : version;
  const generatedTokens = groups.reduce(
    (a, g) => a + (g.episodes?.flat() ?? g.samples).reduce((b, s) => b + s.outputTokens.length, 0),
    0,
  );
  return { groups, generatorStep, generatedTokens };
}

/**
 * Where the trainer's rollouts come from: in-process and synchronous (`SyncRolloutSource`), or a worker
 * thread that keeps generating while the trainer trains (`AsyncRolloutSource`).
 */
export interface RolloutSource {
  /** The scored groups of optimizer step `step` (1-based) for its prompts. */
  next(step: number, tasks: Task[], signal?: AbortSignal): Promise<RolloutBatch>;
  /** Called after optimizer step `step`: the source decides whether to take the new policy's weights. */
  afterStep(step: number, policy: () => WeightSource | Promise<WeightSource>): Promise<void>;
  /** The policy step the generator holds now (0 = the starting model). */
  generatorStep(): number;
  /** The generator's weights when they differ from both the starting model and the current policy (for checkpoints). */
  generatorWeights(): WeightSource | undefined;
  close(): Promise<void>;
}
