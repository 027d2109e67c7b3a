import { deriveSeed, type InferenceEngine, type Task, type VerifyResult } from "@arc/core";
import type { GroupReward } from "../reward/index.ts";
import { MultiTurnWorkflow, RlvrWorkflow } from "../workflow/index.ts";
import type { ScoredGroup } from "./scored-group.ts";

/** How `sampleGroups` samples. */
export interface SampleGroupsOptions {
  /** Samples per prompt (k for DPO, G for GRPO). */
  n: number;
  temperature: number;
  maxTokens: number;
  /** Seed of one prompt's samples; the same seed and weights give the same samples. */
  seedOf: (task: Task, index: number) => number;
  /** The run's reward of each group; a group it cannot score now is left out. */
  reward: GroupReward;
  /** `single-turn` (default): n answers to each prompt. `multi-turn`: n episodes in the family's environment. */
  workflow?: "single-turn" | "multi-turn";
  signal?: AbortSignal;
}

/**
 * Samples n responses per task with the RLVR workflow (all prompts submitted at once so the engine
 * batches them) and rewards each group with the run's reward. Rejected episodes (aborted) and groups the reward
 * could not score are dropped.
 */
export async function sampleGroups(
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: SampleGroupsOptions,
): Promise<ScoredGroup[]> {
  if (options.workflow === "multi-turn") return sampleEpisodeGroups(engine, tasks, options);
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
  const scored = await Promise.all(
    episodes.map(async (episode) => {
      if (!episode) return null;
      const verdicts = episode.info.verdicts as VerifyResult[];
      const rewards = await options.reward({ task: episode.task, samples: episode.turns, verdicts });
      if (!rewards) return null;
      return {
        task: episode.task,
        samples: episode.turns,
        rewards,
        passed: verdicts.map((v) => v.status === "pass"),
        versionRange: episode.versionRange,
      };
    }),
  );
  return scored.filter((g): g is ScoredGroup => g !== null);
}

/**
 * Runs n multi-turn episodes per task (all at once, so the engine batches their turns) in the family's environment,
 * each with its own seed, and rewards each with the run's reward on its last turn and the environment's final
 * verdict. A task whose episode was aborted is dropped.
 */
async function sampleEpisodeGroups(
  engine: InferenceEngine,
  tasks: readonly Task[],
  options: SampleGroupsOptions,
): Promise<ScoredGroup[]> {
  const runs = await Promise.all(
    tasks.map((task, i) =>
      Promise.all(
        Array.from({ length: options.n }, (_, k) =>
          new MultiTurnWorkflow({
            sampling: {
              temperature: options.temperature,
              maxTokens: options.maxTokens,
              seed: (options.seedOf(task, i) + k) & 0x7fffffff,
            },
            signal: options.signal,
          }).runEpisode(engine, task),
        ),
      ),
    ),
  );
  const groups: ScoredGroup[] = [];
  for (const [i, episodes] of runs.entries()) {
    if (episodes.some((e) => e === null || e.turns.length === 0)) continue;
    const kept = episodes as NonNullable<(typeof episodes)[number]>[];
    const verdicts = kept.map((e) => {
      const steps = e.info.steps as { verdict?: VerifyResult }[];
      return (
        steps.at(-1)?.verdict ?? { status: "fail" as const, reward: 0, reason: "the episode did not end" }
      );
    });
    const samples = kept.map((e) => e.turns[e.turns.length - 1]);
    const rewards = await options.reward({ task: tasks[i], samples, verdicts });
    if (!rewards) continue;
    groups.push({
      task: tasks[i],
      samples,
      episodes: kept.map((e) => e.turns),
      rewards,
      passed: verdicts.map((v) => v.status === "pass"),
      versionRange: [
        Math.min(...kept.map((e) => e.versionRange[0])),
        Math.max(...kept.map((e) => e.versionRange[1])),
      ],
    });
  }
  return groups;
}

/** The sampling seed of a prompt: fixed by (run seed, task, generator step), so offline runs reuse their samples. */
export function rolloutSeed(seed: number, task: Task, generatorStep: number): number {
  return deriveSeed(seed, `${task.id}@${generatorStep}`) & 0x7fffffff;
}
