import { createHash } from "node:crypto";
import { type JudgeBudget, judgeWindow, type MinuteWindow } from "./budget-window.ts";
import type { JudgeClient } from "./judge-client.ts";
import { answerText, conversationLines, rubricLines } from "./judge-prompt.ts";
import { JudgeQueueRefusal } from "./judge-queue.ts";
import { JudgeReplyError, replyObject } from "./judge-reply.ts";
import type { Rubric } from "./rubric.ts";

/** The JSON Schema of a group verdict (OpenAI `response_format` `json_schema`, strict): per answer, why, then a score. */
export function groupReplySchema(answers: number): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      scores: {
        type: "array",
        items: {
          type: "object",
          properties: {
            answer: { type: "integer", enum: Array.from({ length: answers }, (_, i) => i + 1) },
            explanation: { type: "string" },
            score: { type: "number" },
          },
          required: ["answer", "explanation", "score"],
          additionalProperties: false,
        },
        minItems: answers,
        maxItems: answers,
      },
    },
    required: ["scores"],
    additionalProperties: false,
  };
}

/** A group's verdict: one score in [0, 1] per answer, in the answers' order, and the judge's reason for each. */
export interface GroupVerdict {
  scores: number[];
  explanations: string[];
}

/** Characters of an explanation kept. */
const EXPLANATION_CHARS = 500;

/** The reply's JSON object: the text itself, else inside a code fence, else from its first `{` to its last `}`. */
function groupReplyObject(text: string): Record<string, unknown> {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text)?.[1];
  const braced = text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1);
  for (const candidate of [text, fenced, braced])
    if (candidate?.trim())
      try {
        return replyObject(candidate.trim());
      } catch {
        // the next, narrower reading
      }
  return replyObject(text); // throws, saying what the reply is
}

/** An answer's number as a reply writes it: `2`, `"2"`, `"answer 2"`; undefined when it names none. */
function answerNumber(value: unknown): number | undefined {
  const digits =
    typeof value === "number" ? String(value) : typeof value === "string" ? /\d+/.exec(value)?.[0] : "";
  const n = Number(digits);
  return digits && Number.isInteger(n) ? n : undefined;
}

/** One answer's entry of a reply: its number (if written), its explanation, its score in [0, 1]. */
function groupEntry(entry: unknown, i: number): { answer?: number; explanation: string; score: number } {
  const item = typeof entry === "number" ? { score: entry } : ((entry ?? {}) as Record<string, unknown>);
  const raw = typeof item.score === "string" && item.score.trim() !== "" ? Number(item.score) : item.score;
  if (typeof raw !== "number" || !(raw >= 0 && raw <= 1))
    throw new JudgeReplyError(
      `scores[${i}].score: expected a number from 0 to 1, got ${JSON.stringify(item.score)}`,
    );
  const explanation = typeof item.explanation === "string" ? item.explanation.trim() : "";
  const answer = answerNumber(item.answer ?? item.id ?? item.trajectory_id);
  return {
    ...(answer !== undefined ? { answer } : {}),
    explanation: explanation.slice(0, EXPLANATION_CHARS),
    score: raw,
  };
}

/**
 * Reads a group verdict (RULER's scheme): `{"scores": [{"answer": 1, "explanation": "...", "score": 0.8}, ...]}`,
 * one entry per answer. Read robustly where the form varies but the meaning cannot: the object may sit in a code
 * fence or among prose, fields beside the asked ones are ignored, a number may be written as a string, entries may
 * come in any order when every one names its answer (else they are read in order), and a bare number is a score with
 * no explanation. A missing, duplicated or out-of-range score is a `JudgeReplyError`, never a guess.
 */
export function parseGroupReply(text: string, answers: number): GroupVerdict {
  const entries = (groupReplyObject(text) as { scores?: unknown }).scores;
  if (!Array.isArray(entries) || entries.length !== answers)
    throw new JudgeReplyError(
      `scores: expected ${answers} entries, one per answer, got ${JSON.stringify(entries)?.slice(0, 200)}`,
    );
  const read = entries.map(groupEntry);
  const numbered = read.every((e) => e.answer !== undefined);
  const ordered: (typeof read)[number][] = numbered ? new Array(answers) : read;
  if (numbered)
    for (const entry of read) {
      const at = (entry.answer as number) - 1;
      if (at < 0 || at >= answers || ordered[at])
        throw new JudgeReplyError(
          `scores: answer ${entry.answer} is ${ordered[at] ? "scored twice" : `not one of 1 to ${answers}`}`,
        );
      ordered[at] = entry;
    }
  return { scores: ordered.map((e) => e.score), explanations: ordered.map((e) => e.explanation) };
}

/**
 * The chat that asks the judge to score every answer of a group to one conversation, against the rubric, at once:
 * for each answer a short explanation first, then its score (RULER's scheme).
 */
export function groupJudgeMessages(
  rubric: Rubric,
  conversation: readonly unknown[],
  answers: readonly string[],
): { role: "system" | "user"; content: string }[] {
  const system = [
    `You compare ${answers.length} answers an AI agent gave to the same conversation, against a rubric. For each answer, first explain in one short sentence how it meets or misses the rubric, then score it from 0 (fails the rubric) to 1 (a good answer); score better answers higher, equal answers equally.`,
    ...rubricLines(rubric),
    `Reply with one JSON object: {"scores": [${answers.map((_, i) => `{"answer": ${i + 1}, "explanation": "...", "score": ...}`).join(", ")}]}.`,
  ];
  const user = [
    ...conversationLines(conversation),
    ...answers.map((a, i) => `[answer ${i + 1}] ${answerText(a)}`),
  ];
  return [
    { role: "system", content: system.join("\n") },
    { role: "user", content: user.join("\n") },
  ];
}

/** Group verdicts kept in memory; the oldest goes first. */
const CACHED_GROUPS = 10_000;

/** Options of a group judge. */
export interface GroupJudgeOptions {
  rubric: Rubric;
  client: JudgeClient;
  model: string;
  budget?: JudgeBudget;
  /** A spending window shared with the tenant's other judges (then `budget` and `now` are not read). */
  window?: MinuteWindow;
  /** Most tokens of one reply. */
  maxTokens?: number;
  now?: () => number;
}

/** Scores the answers of a group to one conversation; a group it could not score gets the reason instead. */
export interface GroupJudge {
  /** `deadline` (ms since the epoch) ends the wait for the judge; the group is then unscored. */
  score(
    conversation: readonly unknown[],
    answers: readonly string[],
    options?: { deadline?: number },
  ): Promise<GroupVerdict | { unscored: string }>;
}

/** Tokens of a group reply per answer: its number, a one-sentence explanation and its score. */
const REPLY_TOKENS_PER_ANSWER = 64;

/**
 * A judge that scores a group of answers to one conversation in one call (RULER's group ranking for GRPO and
 * semi-online DPO), each score after the judge's explanation of it: the scores are relative within the group, which
 * is all a group-normalized advantage or a best-and-worst pair needs. Verdicts are cached by
 * (conversation, answers, rubric version, model). A group the judge could not score gets the reason instead.
 */
export function createGroupJudge(options: GroupJudgeOptions): GroupJudge {
  const { rubric, client, model } = options;
  const cache = new Map<string, GroupVerdict>();
  const window = judgeWindow(options);
  return {
    async score(conversation, answers, judging = {}) {
      const key = createHash("sha256")
        .update(JSON.stringify([conversation, answers, rubric.version, model]))
        .digest("hex");
      const cached = cache.get(key);
      if (cached) return cached;
      const refusal = window.refusal();
      if (refusal) return { unscored: `not judged yet: ${refusal}` };
      const spent = window.reserve();
      try {
        const answer = await client.complete({
          model,
          messages: groupJudgeMessages(rubric, conversation, answers),
          responseFormat: {
            type: "json_schema",
            json_schema: { name: "group_scores", strict: true, schema: groupReplySchema(answers.length) },
          },
          maxTokens: options.maxTokens ?? 32 + REPLY_TOKENS_PER_ANSWER * answers.length,
          ...judging,
        });
        spent.tokens = answer.tokens ?? 0;
        const verdict = parseGroupReply(answer.content, answers.length);
        if (cache.size >= CACHED_GROUPS) cache.delete(cache.keys().next().value as string);
        cache.set(key, verdict);
        return verdict;
      } catch (error) {
        if (error instanceof JudgeQueueRefusal) {
          window.cancel(spent);
          return { unscored: `not judged yet: ${error.message}` };
        }
        return { unscored: `the judge could not score the group: ${(error as Error).message}` };
      }
    },
  };
}
