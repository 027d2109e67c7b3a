import { readFile } from "node:fs/promises";
import { generateTasks, getTaskFamily, InvalidInputError, type Task } from "@arc/core";
import type { TokenPair } from "../algo/dpo-batch.ts";
import { type ChatExample, sftExamples } from "../data/index.ts";
import type { Recipe } from "../recipe/index.ts";
import type { ChatMessage, RenderExample } from "./engine-factory.ts";

/** The data a run trains and judges on, all derived from the recipe (so a resumed run rebuilds it identically). */
export interface TrainingData {
  /** Prompt pool of the RL algorithms. */
  prompts: Task[];
  /** SFT examples (SFT only). */
  examples: ChatExample[];
  /** Production preference pairs to mix into DPO steps. */
  preferences: TokenPair[];
  /** Held-out tasks. */
  evalTasks: Task[];
}

/** Reads one preference JSONL row: `prompt` (chat list or string), `chosen`/`rejected` (string or one assistant message). */
function parsePreferenceRow(
  line: string,
  where: string,
): { prompt: ChatMessage[]; chosen: string; rejected: string } {
  const row = JSON.parse(line) as Record<string, unknown>;
  const text = (v: unknown, field: string): string => {
    if (typeof v === "string") return v;
    if (Array.isArray(v) && typeof v[0]?.content === "string") return v[0].content as string;
    throw new InvalidInputError(
      `${where}.${field}: expected a string or [{role, content}], got ${JSON.stringify(v)}`,
      {
        field,
      },
    );
  };
  const prompt =
    typeof row.prompt === "string"
      ? [{ role: "user", content: row.prompt }]
      : Array.isArray(row.prompt)
        ? (row.prompt as ChatMessage[])
        : undefined;
  if (!prompt) {
    throw new InvalidInputError(
      `${where}.prompt: expected a string or a chat list, got ${JSON.stringify(row.prompt)}`,
      {
        field: "prompt",
      },
    );
  }
  return { prompt, chosen: text(row.chosen, "chosen"), rejected: text(row.rejected, "rejected") };
}

/**
 * Reads a PromptPool JSONL (`question`, `solution`, `env`, `context`, `meta` rows) as tasks of the recipe's env.
 * Reference-free rows (no solution) are left out: a verifier cannot reward them.
 */
async function readPromptPool(path: string, env: string): Promise<Task[]> {
  const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l.trim() !== "");
  const tasks: Task[] = [];
  for (const [i, line] of lines.entries()) {
    const row = JSON.parse(line) as { question?: unknown; solution?: unknown; env?: unknown; meta?: unknown };
    if (typeof row.question !== "string") {
      throw new InvalidInputError(
        `${path}:${i + 1}: expected a row with a string question, got ${line.slice(0, 120)}`,
        { field: "data.prompts" },
      );
    }
    if (row.solution === undefined) continue;
    if (row.env !== undefined && row.env !== env) {
      throw new InvalidInputError(
        `${path}:${i + 1}.env: expected "${env}" (data.env), got ${JSON.stringify(row.env)}`,
        {
          field: "data.prompts",
        },
      );
    }
    const meta = (row.meta ?? {}) as Record<string, unknown>;
    tasks.push({ id: `pool-${i}`, env, question: row.question, solution: row.solution, meta });
  }
  if (tasks.length === 0) {
    throw new InvalidInputError(
      `${path}: expected at least one prompt row with a solution, got ${lines.length === 0 ? "none" : `${lines.length} reference-free rows`}`,
      { field: "data.prompts" },
    );
  }
  return tasks;
}

/** Builds the run's data from its recipe. */
export async function loadTrainingData(recipe: Recipe, render: RenderExample): Promise<TrainingData> {
  const family = getTaskFamily(recipe.data.env);
  const prompts = recipe.data.prompts
    ? await readPromptPool(recipe.data.prompts, recipe.data.env)
    : generateTasks(family, { split: recipe.data.split, seed: recipe.data.seed, count: recipe.data.count });
  const examples =
    recipe.trainer.algorithm === "sft"
      ? sftExamples(family, prompts, { guidedFraction: recipe.data.guidedFraction, seed: recipe.data.seed })
      : [];
  const preferences: TokenPair[] = [];
  if (recipe.data.preferences && recipe.trainer.algorithm === "dpo") {
    const lines = (await readFile(recipe.data.preferences, "utf8"))
      .split("\n")
      .filter((l) => l.trim() !== "");
    lines.forEach((line, i) => {
      const row = parsePreferenceRow(line, `${recipe.data.preferences}:${i + 1}`);
      const chosen = render(row.prompt, row.chosen);
      const rejected = render(row.prompt, row.rejected);
      preferences.push({
        promptTokens: chosen.promptTokens,
        chosenTokens: chosen.outputTokens,
        rejectedTokens: rejected.outputTokens,
      });
    });
  }
  const evalTasks =
    recipe.data.evalCount > 0
      ? generateTasks(family, {
          split: recipe.data.evalSplit,
          seed: recipe.data.evalSeed,
          count: recipe.data.evalCount,
        })
      : [];
  return { prompts, examples, preferences, evalTasks };
}
