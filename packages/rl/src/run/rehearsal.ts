import { existsSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type GenMessage, type InferenceEngine, InvalidInputError } from "@arc/core";
import type { ChatExample } from "../data/sft-examples.ts";
import { parseJsonLine, readChatExamples } from "./training-data.ts";

/** The file in a run's folder that keeps the starting model's rehearsal answers, so a resumed run learns the same. */
export const REHEARSAL_FILE = "rehearsal.jsonl";

/** The most tokens of a rehearsal answer; an answer cut off there is left out (it would teach stopping mid-answer). */
export const REHEARSAL_MAX_TOKENS = 96;

/**
 * Reads a JSONL of rehearsal prompts: each line `{"messages": [...]}` (chat messages, the last one the user's) or
 * `{"prompt": "..."}` (one user message, as the general slice writes its items). Errors name the line and field.
 */
export async function readRehearsalPrompts(path: string): Promise<GenMessage[][]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new InvalidInputError(`data.rehearsal: cannot read ${path} (${(error as Error).message})`, {
      field: "data.rehearsal",
    });
  }
  const prompts: GenMessage[][] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const where = `${path}:${i + 1}`;
    const row = parseJsonLine<{ messages?: unknown; prompt?: unknown }>(line, where, "data.rehearsal");
    if (typeof row?.prompt === "string" && row.prompt !== "") {
      prompts.push([{ role: "user", content: row.prompt }]);
      return;
    }
    const messages = row?.messages;
    const valid =
      Array.isArray(messages) &&
      messages.length > 0 &&
      messages.every((m) => typeof m?.role === "string" && typeof m?.content === "string") &&
      messages.at(-1)?.role === "user";
    if (!valid)
      throw new InvalidInputError(
        `${where}: expected {"prompt": "<text>"} or {"messages": [...]} ending in a user message, got ${line.slice(0, 120)}`,
        { field: "data.rehearsal" },
      );
    prompts.push(messages as GenMessage[]);
  });
  if (prompts.length === 0)
    throw new InvalidInputError(`${path}: expected at least one rehearsal prompt, got none`, {
      field: "data.rehearsal",
    });
  return prompts;
}

/**
 * The starting model's own answers to the rehearsal prompts, as chat examples: greedy, up to `REHEARSAL_MAX_TOKENS`,
 * keeping only answers that ended. Read from `<runDir>/rehearsal.jsonl` when a run made them before (a resumed run's
 * model has moved on), else asked of `openEngine()`'s engine and written there (whole or not at all).
 */
export async function rehearsalExamples(
  promptsPath: string,
  runDir: string,
  openEngine: () => Promise<InferenceEngine>,
): Promise<ChatExample[]> {
  const file = join(runDir, REHEARSAL_FILE);
  if (existsSync(file)) return readChatExamples(file);
  const prompts = await readRehearsalPrompts(promptsPath);
  const engine = await openEngine();
  let results: Awaited<ReturnType<InferenceEngine["generate"]>>;
  try {
    results = await engine.generate(
      prompts.map((messages, i) => ({
        id: String(i),
        messages,
        maxTokens: REHEARSAL_MAX_TOKENS,
        temperature: 0,
      })),
    );
  } finally {
    await engine.close?.();
  }
  const answered = results.flatMap((r, i) =>
    r.finishReason === "stop" && r.text.trim() !== "" ? [{ messages: prompts[i], reply: r.text.trim() }] : [],
  );
  if (answered.length === 0)
    throw new InvalidInputError(
      `data.rehearsal: the starting model ended none of its ${prompts.length} answers within ${REHEARSAL_MAX_TOKENS} tokens; there is nothing to rehearse`,
      { field: "data.rehearsal" },
    );
  const rows = answered.map((a) =>
    JSON.stringify({ messages: [...a.messages, { role: "assistant", content: a.reply }] }),
  );
  await writeFile(`${file}.tmp`, `${rows.join("\n")}\n`);
  await rename(`${file}.tmp`, file);
  return readChatExamples(file);
}

/**
 * The task's examples with rehearsal examples mixed in, so that `share` of the result rehearses: the rehearsal
 * examples repeated in turn up to `round(share / (1 - share) × task examples)` (the run's data order shuffles them).
 */
export function mixRehearsal(
  examples: readonly ChatExample[],
  rehearsal: readonly ChatExample[],
  share: number,
): ChatExample[] {
  if (share <= 0 || rehearsal.length === 0) return [...examples];
  const wanted = Math.max(1, Math.round((share / (1 - share)) * examples.length));
  return [...examples, ...Array.from({ length: wanted }, (_, i) => rehearsal[i % rehearsal.length])];
}
