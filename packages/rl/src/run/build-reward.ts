import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { InvalidInputError, JudgeQueue, openAIJudgeClient, parseRubric } from "@arc/core";
import type { Recipe } from "../recipe/index.ts";
import {
  type GroupReward,
  type JudgeUsage,
  judgeReward,
  partialCreditReward,
  pointwise,
  type RewardFn,
  verifierReward,
  withPenalties,
} from "../reward/index.ts";

/** A run's reward, and what its judge spent and the queue its calls go through, when it has one. */
export interface RunReward {
  reward: GroupReward;
  judgeUsage?: () => JudgeUsage;
  judgeQueue?: JudgeQueue;
}

/**
 * The judge reward of a `reward.judge` block: its rubric file read and checked, its endpoint's key from the env, and
 * its calls through one queue (the bound a server puts on its judges: `concurrency` in flight, each by its
 * `deadlineMs`, a transient failure tried `retries` times with back-off), so a run cannot flood its judge.
 */
async function buildJudgeReward(judge: NonNullable<Recipe["reward"]["judge"]>): Promise<RunReward> {
  let text: string;
  try {
    text = await readFile(resolve(judge.rubric), "utf8");
  } catch (error) {
    throw new InvalidInputError(
      `reward.judge.rubric: cannot read ${judge.rubric} (${(error as Error).message})`,
      {
        field: "reward.judge.rubric",
      },
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      `reward.judge.rubric: ${judge.rubric} is not JSON (${(error as Error).message})`,
      {
        field: "reward.judge.rubric",
      },
    );
  }
  const apiKey = judge.apiKeyEnv ? process.env[judge.apiKeyEnv] : undefined;
  if (judge.apiKeyEnv && !apiKey)
    throw new InvalidInputError(`reward.judge.apiKeyEnv: ${judge.apiKeyEnv} is not set in the environment`, {
      field: "reward.judge.apiKeyEnv",
    });
  const queue = new JudgeQueue(`${judge.model} at ${judge.baseUrl}`, {
    ...(judge.concurrency !== undefined ? { concurrency: judge.concurrency } : {}),
    ...(judge.deadlineMs !== undefined ? { deadlineMs: judge.deadlineMs } : {}),
    ...(judge.retries !== undefined ? { retries: judge.retries } : {}),
  });
  const { reward, usage } = judgeReward({
    rubric: parseRubric(raw),
    model: judge.model,
    mode: judge.mode,
    client: queue.client(openAIJudgeClient({ baseUrl: judge.baseUrl, apiKey }), "foreground"),
    budget: {
      callsPerMinute: judge.callsPerMinute ?? Number.POSITIVE_INFINITY,
      tokensPerMinute: judge.tokensPerMinute ?? Number.POSITIVE_INFINITY,
    },
  });
  return { reward, judgeUsage: usage, judgeQueue: queue };
}

/**
 * The reward a recipe's `reward` block describes: the verifier's, partial credit, a judge model's rubric score
 * (`kind: judge` with a `judge` block), or a `module`'s default-exported RewardFn.
 */
export async function buildReward(block: Recipe["reward"]): Promise<RunReward> {
  if (block.kind === "judge" && !block.module) {
    if (!block.judge)
      throw new InvalidInputError(
        "reward.judge: expected a judge block (baseUrl, model, rubric) for kind judge",
        {
          field: "reward.judge",
        },
      );
    if (block.truncatedPenalty > 0)
      throw new InvalidInputError(
        "reward.truncatedPenalty: not taken with kind judge (the judge reads the answer)",
        {
          field: "reward.truncatedPenalty",
        },
      );
    return buildJudgeReward(block.judge);
  }
  let base: RewardFn = block.kind === "verifier" ? verifierReward : partialCreditReward;
  if (block.module) {
    const mod = (await import(pathToFileURL(resolve(block.module)).href)) as { default?: unknown };
    if (typeof mod.default !== "function") {
      throw new InvalidInputError(
        `reward.module: expected a module whose default export is a function, got ${typeof mod.default}`,
        {
          field: "reward.module",
        },
      );
    }
    base = mod.default as RewardFn;
  }
  return {
    reward: pointwise(
      block.truncatedPenalty > 0 ? withPenalties(base, { truncated: block.truncatedPenalty }) : base,
    ),
  };
}
