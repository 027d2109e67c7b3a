import { deriveSeed, type InferenceEngine, type Task, type VerifyResult } from "@arc/core";
import type { RewardFn } from "../reward/index.ts";
import { RlvrWorkflow } from "../workflow/index.ts";
import type { ScoredGroup } from "./scored-group.ts";

/** How `sampleGroups` samples. */
export interface SampleGroupsOptions {
  /** Samples per prompt (k for DPO, G for GRPO). */
  n: number;
  temperature: number;
  maxTokens: number;
  /** Seed of one prompt's samples; the same seed and weights give the same samples. */
  seedOf: (task: Task, index: number) => number;
  reward: RewardFn;
  signal?: AbortSignal;
}

/**
 * Samples n responses per task with the RLVR workflow (all prompts submitted at once so the engine
 * batches them) and rewards each sample with the run's reward. Rejected episodes (aborted) are dropped.
 */
export async function sampleGroups(
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: SampleGroupsOptions,
): Promise<ScoredGroup[]> {
  const episodes = await Promise.all(
    tasks.map((task, i) =>
      new RlvrWorkflow({
        n: options.n,
        sampling: {
          temperature: options.temperature,
          maxTokens: options.maxTokens,
          seed: options.seedOf(task, i),
        },
        signal: options.signal,
      }).runEpisode(engine, task),
    ),
  );
  const groups: ScoredGroup[] = [];
  for (const episode of episodes) {
    if (!episode) continue;
    const verdicts = episode.info.verdicts as VerifyResult[];
    groups.push({
      task: episode.task,
      samples: episode.turns,
      rewards: episode.turns.map((sample, k) =>
        options.reward({ task: episode.task, sample, verdict: verdicts[k] }),
      ),
      passed: verdicts.map((v) => v.status === "pass"),
      versionRange: episode.versionRange,
    });
  }
  return groups;
}

/** The sampling seed of a prompt: fixed by (run seed, task, generator step), so offline runs reuse their samples. */
export function rolloutSeed(seed: number, task: Task, generatorStep: number): number {
  return deriveSeed(seed, `${task.id}@${generatorStep}`) & 0x7fffffff;
}
