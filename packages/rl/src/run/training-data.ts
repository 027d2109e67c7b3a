import { readFile } from "node:fs/promises";
import { getTaskFamily, InvalidInputError, type Task } from "@arc/core";
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

/** Builds the run's data from its recipe. */
export async function loadTrainingData(recipe: Recipe, render: RenderExample): Promise<TrainingData> {
  const family = getTaskFamily(recipe.data.env);
  const prompts = family.generate({
    split: recipe.data.split,
    seed: recipe.data.seed,
    count: recipe.data.count,
  });
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
      ? family.generate({
          split: recipe.data.evalSplit,
          seed: recipe.data.evalSeed,
          count: recipe.data.evalCount,
        })
      : [];
  return { prompts, examples, preferences, evalTasks };
}
