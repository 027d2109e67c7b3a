import { readFile } from "node:fs/promises";
import {
  type GenMessage,
  generateTasks,
  getTaskFamily,
  InvalidInputError,
  type Task,
  type TaskContext,
} from "@arc/core";
import type { TokenPair } from "../algo/dpo-batch.ts";
import { type ChatExample, sftExamples } from "../data/index.ts";
import type { Recipe } from "../recipe/index.ts";
import type { ChatMessage, RenderExample } from "./engine-factory.ts";

/** The data a run trains and judges on, all derived from the recipe (so a resumed run rebuilds it identically). */
export interface TrainingData {
  /** Prompt pool of the RL algorithms. */
  prompts: Task[];
  /** SFT examples (SFT only): the prompts' reference answers, then the preference rows' chosen answers. */
  examples: ChatExample[];
  /** Production preference pairs to mix into DPO steps. */
  preferences: TokenPair[];
  /** Held-out tasks. */
  evalTasks: Task[];
}

/**
 * Reads one preference JSONL row: `prompt` (chat list or string), `chosen`/`rejected` (string or one assistant
 * message), and the `tools` the agent offered, if any.
 */
function parsePreferenceRow(
  line: string,
  where: string,
): { prompt: ChatMessage[]; tools?: object[]; chosen: string; rejected: string } {
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
  if (row.tools !== undefined && !Array.isArray(row.tools)) {
    throw new InvalidInputError(
      `${where}.tools: expected a list of OpenAI tools, got ${JSON.stringify(row.tools)}`,
      {
        field: "tools",
      },
    );
  }
  return {
    prompt,
    ...(row.tools ? { tools: row.tools as object[] } : {}),
    chosen: text(row.chosen, "chosen"),
    rejected: text(row.rejected, "rejected"),
  };
}

/** One JSONL line parsed, or an InvalidInputError naming `where` (file and line) and the recipe `field` it came from. */
export function parseJsonLine<T>(line: string, where: string, field: string): T {
  try {
    return JSON.parse(line) as T;
  } catch (error) {
    throw new InvalidInputError(`${where}: not JSON (${(error as Error).message})`, { field });
  }
}

/**
 * Reads a JSONL of chat examples in OpenAI's fine-tuning format: each row's `messages` end in the assistant reply
 * to learn (string content), after at least one prompt message; `tools` is optional. Errors name the line and field.
 */
export async function readChatExamples(path: string): Promise<ChatExample[]> {
  const lines = (await readFile(path, "utf8")).split("\n");
  const examples: ChatExample[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `${path}:${i + 1}`;
    const fail = (field: string, expected: string, got: unknown) =>
      new InvalidInputError(
        `${where}.${field}: expected ${expected}, got ${JSON.stringify(got)?.slice(0, 120)}`,
        { field: "data.examples" },
      );
    const row = parseJsonLine<{ messages?: unknown; tools?: unknown }>(line, where, "data.examples");
    const messages = row?.messages;
    if (!Array.isArray(messages) || messages.length < 2)
      throw fail("messages", "a prompt and the assistant reply to learn", messages);
    messages.forEach((m, k) => {
      if (typeof m?.role !== "string" || typeof m?.content !== "string")
        throw fail(`messages[${k}]`, "a message with a string role and string content", m);
    });
    const reply = messages.at(-1) as ChatMessage;
    if (reply.role !== "assistant")
      throw fail(`messages[${messages.length - 1}].role`, "assistant", reply.role);
    if (row.tools !== undefined && !Array.isArray(row.tools))
      throw fail("tools", "a list of OpenAI tools", row.tools);
    examples.push({
      messages: messages.slice(0, -1) as ChatMessage[],
      ...(row.tools ? { tools: row.tools as object[] } : {}),
      reply: reply.content as string,
      guided: false,
    });
  });
  if (examples.length === 0)
    throw new InvalidInputError(`${path}: expected at least one chat example, got none`, {
      field: "data.examples",
    });
  return examples;
}

/** A row's recorded `context` (`messages` with a role each, and optional `tools`), or an error naming the field. */
function promptContext(value: unknown, where: string): TaskContext {
  const context = value as { messages?: unknown; tools?: unknown } | null;
  const fail = (field: string, expected: string, got: unknown) =>
    new InvalidInputError(
      `${where}.context.${field}: expected ${expected}, got ${JSON.stringify(got)?.slice(0, 120)}`,
      {
        field: "data.prompts",
      },
    );
  if (typeof context !== "object" || context === null || !Array.isArray(context.messages))
    throw fail("messages", "a list of chat messages", context?.messages);
  const messages = context.messages.map((m, k): GenMessage => {
    if (typeof m !== "object" || m === null || typeof (m as { role?: unknown }).role !== "string")
      throw fail(`messages[${k}]`, "a message with a string role", m);
    const message = m as GenMessage & { content: unknown };
    if (!Array.isArray(message.content)) return message;
    // content parts, as the chat endpoints take them: the text parts joined
    const text = message.content.map((part: { type?: unknown; text?: unknown }, j) => {
      if (part?.type !== "text" || typeof part.text !== "string")
        throw fail(
          `messages[${k}].content[${j}]`,
          "a text part (the engines train text-only models)",
          part?.type,
        );
      return part.text;
    });
    return { ...message, content: text.join("") };
  });
  if (messages.length === 0) throw fail("messages", "at least one message", context.messages);
  if (context.tools !== undefined && !Array.isArray(context.tools))
    throw fail("tools", "a list of OpenAI tools", context.tools);
  return {
    messages,
    ...(context.tools ? { tools: context.tools as object[] } : {}),
  };
}

/**
 * Reads a PromptPool JSONL (`question`, `solution`, `env`, `context`, `meta` rows) as tasks of the recipe's env; a
 * row's recorded `context` (the agent's messages and tools) is the prompt its task is trained and sampled with.
 * Reference-free rows (no solution) are kept only with `referenceFree` (a judge rewards them); a verifier cannot.
 */
async function readPromptPool(
  path: string,
  env: string,
  referenceFree: boolean,
): Promise<{ tasks: Task[]; rows: number }> {
  const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l.trim() !== "");
  const tasks: Task[] = [];
  for (const [i, line] of lines.entries()) {
    const row = JSON.parse(line) as {
      question?: unknown;
      solution?: unknown;
      env?: unknown;
      meta?: unknown;
      context?: unknown;
    };
    if (typeof row.question !== "string") {
      throw new InvalidInputError(
        `${path}:${i + 1}: expected a row with a string question, got ${line.slice(0, 120)}`,
        { field: "data.prompts" },
      );
    }
    if (row.solution === undefined && !referenceFree) continue;
    if (row.env !== undefined && row.env !== env) {
      throw new InvalidInputError(
        `${path}:${i + 1}.env: expected "${env}" (data.env), got ${JSON.stringify(row.env)}`,
        {
          field: "data.prompts",
        },
      );
    }
    const meta = (row.meta ?? {}) as Record<string, unknown>;
    const context = row.context === undefined ? undefined : promptContext(row.context, `${path}:${i + 1}`);
    tasks.push({
      id: `pool-${i}`,
      env,
      question: row.question,
      solution: row.solution,
      meta,
      ...(context ? { context } : {}),
    });
  }
  return { tasks, rows: lines.length };
}

/**
 * Whether the recipe's data holds anything SFT can learn: chat examples, generated tasks, a prompt row with a
 * reference answer, or a preference row (a correction). A judge-rewarded pool of production prompts may hold none.
 */
export async function hasSftData(recipe: Recipe): Promise<boolean> {
  if (recipe.data.examples || !recipe.data.prompts) return true;
  if ((await readPromptPool(recipe.data.prompts, recipe.data.env, false)).tasks.length > 0) return true;
  if (!recipe.data.preferences) return false;
  return (await readFile(recipe.data.preferences, "utf8")).trim() !== "";
}

/** Builds the run's data from its recipe. */
export async function loadTrainingData(recipe: Recipe, render: RenderExample): Promise<TrainingData> {
  const family = getTaskFamily(recipe.data.env);
  // a judge's reward needs no reference answer; SFT learns only rows that have one
  const referenceFree = recipe.reward.kind === "judge" && recipe.trainer.algorithm !== "sft";
  const pool = recipe.data.prompts
    ? await readPromptPool(recipe.data.prompts, recipe.data.env, referenceFree)
    : null;
  const prompts =
    pool?.tasks ??
    generateTasks(family, { split: recipe.data.split, seed: recipe.data.seed, count: recipe.data.count });
  const preferenceRows = recipe.data.preferences
    ? (await readFile(recipe.data.preferences, "utf8"))
        .split("\n")
        .map((line, i) => ({ line, where: `${recipe.data.preferences}:${i + 1}` }))
        .filter(({ line }) => line.trim() !== "")
        .map(({ line, where }) => parsePreferenceRow(line, where))
    : [];
  const algorithm = recipe.trainer.algorithm;
  // SFT may learn from corrections alone; everything else needs prompts
  if (pool && pool.tasks.length === 0 && !(algorithm === "sft" && preferenceRows.length > 0)) {
    throw new InvalidInputError(
      `${recipe.data.prompts}: expected at least one prompt row with a solution, got ${pool.rows === 0 ? "none" : `${pool.rows} reference-free rows`}`,
      { field: "data.prompts" },
    );
  }
  if (recipe.data.examples && algorithm !== "sft")
    throw new InvalidInputError(
      `data.examples: chat examples are learned by SFT only, and this recipe's algorithm is ${algorithm}`,
      { field: "data.examples" },
    );
  // SFT learns the chat examples given, or else the pool's reference answers, and the chosen answers of the
  // preference rows (human corrections)
  const examples: ChatExample[] =
    algorithm === "sft"
      ? [
          ...(recipe.data.examples
            ? await readChatExamples(recipe.data.examples)
            : sftExamples(family, prompts, {
                guidedFraction: recipe.data.guidedFraction,
                seed: recipe.data.seed,
              })),
          ...preferenceRows.map((row) => ({
            messages: row.prompt,
            ...(row.tools ? { tools: row.tools } : {}),
            reply: row.chosen,
            guided: false,
          })),
        ]
      : [];
  const preferences: TokenPair[] =
    algorithm === "dpo"
      ? preferenceRows.map((row) => {
          const chosen = render(row.prompt, row.chosen, row.tools);
          const rejected = render(row.prompt, row.rejected, row.tools);
          return {
            promptTokens: chosen.promptTokens,
            chosenTokens: chosen.outputTokens,
            rejectedTokens: rejected.outputTokens,
          };
        })
      : [];
  return { prompts, examples, preferences, evalTasks: heldOutTasks(recipe) };
}

/** The recipe's held-out tasks (`data.evalSplit`, `evalSeed`, `evalCount`); none when `evalCount` is 0. */
export function heldOutTasks(recipe: Recipe): Task[] {
  const { data } = recipe;
  if (data.evalCount === 0) return [];
  return generateTasks(getTaskFamily(data.env), {
    split: data.evalSplit,
    seed: data.evalSeed,
    count: data.evalCount,
  });
}
