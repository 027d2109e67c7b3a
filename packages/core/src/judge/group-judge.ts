import { createHash } from "node:crypto";
import { type JudgeBudget, judgeWindow, type MinuteWindow } from "./budget-window.ts";
import type { JudgeClient } from "./judge-client.ts";
import { answerText, conversationLines, rubricLines } from "./judge-prompt.ts";
import { JudgeQueueRefusal } from "./judge-queue.ts";
import { JudgeReplyError, replyObject } from "./judge-reply.ts";
import type { Rubric } from "./rubric.ts";

/** The JSON Schema of a group verdict (OpenAI `response_format` `json_schema`, strict): one score per answer. */
export function groupReplySchema(answers: number): Record<string, unknown> {
  return {
    type: "object",
    properties: {
      scores: { type: "array", items: { type: "number" }, minItems: answers, maxItems: answers },
    },
    required: ["scores"],
    additionalProperties: false,
  };
}

/** Reads a group verdict strictly: `{"scores": [...]}`, one number in [0, 1] per answer, nothing else. */
export function parseGroupReply(text: string, answers: number): number[] {
  const value = replyObject(text);
  const extra = Object.keys(value).filter((k) => k !== "scores");
  if (extra.length > 0)
    throw new JudgeReplyError(`the judge's reply has fields it was not asked for: ${extra.join(", ")}`);
  const scores = (value as { scores?: unknown }).scores;
  if (!Array.isArray(scores) || scores.length !== answers)
    throw new JudgeReplyError(
      `scores: expected ${answers} numbers, one per answer, got ${JSON.stringify(scores)?.slice(0, 200)}`,
    );
  scores.forEach((s, i) => {
    if (typeof s !== "number" || !(s >= 0 && s <= 1))
      throw new JudgeReplyError(`scores[${i}]: expected a number from 0 to 1, got ${JSON.stringify(s)}`);
  });
  return scores as number[];
}

/** The chat that asks the judge to score every answer of a group to one conversation, against the rubric, at once. */
export function groupJudgeMessages(
  rubric: Rubric,
  conversation: readonly unknown[],
  answers: readonly string[],
): { role: "system" | "user"; content: string }[] {
  const system = [
    `You compare ${answers.length} answers an AI agent gave to the same conversation, against a rubric. Score each answer from 0 (fails the rubric) to 1 (a good answer); score better answers higher, equal answers equally.`,
    ...rubricLines(rubric),
    `Reply with one JSON object: {"scores": [${answers.map((_, i) => `score of answer ${i + 1}`).join(", ")}]}.`,
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
  ): Promise<number[] | { unscored: string }>;
}

/**
 * A judge that scores a group of answers to one conversation in one call (RULER's group ranking for GRPO): the
 * scores are relative within the group, which is all a group-normalized advantage needs. Scores are cached by
 * (conversation, answers, rubric version, model). A group the judge could not score gets the reason instead.
 */
export function createGroupJudge(options: GroupJudgeOptions): GroupJudge {
  const { rubric, client, model } = options;
  const cache = new Map<string, number[]>();
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
          maxTokens: options.maxTokens ?? 32 + 16 * answers.length,
          ...judging,
        });
        spent.tokens = answer.tokens ?? 0;
        const scores = parseGroupReply(answer.content, answers.length);
        if (cache.size >= CACHED_GROUPS) cache.delete(cache.keys().next().value as string);
        cache.set(key, scores);
        return scores;
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
