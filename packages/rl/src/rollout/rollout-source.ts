import type { Task, WeightSource } from "@arc/core";
import type { ScoredGroup } from "./scored-group.ts";

/** What a rollout source hands the trainer for one optimizer step. */
export interface RolloutBatch {
  groups: ScoredGroup[];
  /** The policy step whose weights generated the oldest of these groups' tokens. */
  generatorStep: number;
  /** Tokens generated for these groups. */
  generatedTokens: number;
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
