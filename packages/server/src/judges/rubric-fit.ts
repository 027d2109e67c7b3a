import { InvalidInputError, judgeMessages, type Rubric, Trace } from "@arc/core";
import type { JudgeModel } from "./judge-store.ts";
import type { JudgeUpstreams } from "./tenant-judge.ts";

/** The room a verdict needs: its JSON with a short quote as evidence. */
export const VERDICT_TOKENS = 128;

/** How long the judge's upstream has to count a prompt's tokens. */
const TOKENIZE_TIMEOUT_MS = 5_000;

/**
 * A typical judged conversation, short as a tool-using agent's often are: a one-line system prompt and a request,
 * answered with one tool call.
 * The judge is shown the tool calls of a conversation, never its tool list, so a long tool list adds nothing here.
 */
const TYPICAL_TRACE = Trace.parse({
  id: "typical",
  status: "ok",
  startedAt: "2026-01-01T00:00:00.000Z",
  steps: [
    {
      id: "s1",
      kind: "llm",
      startedAt: "2026-01-01T00:00:00.000Z",
      llm: {
        messages: [
          {
            role: "system",
            content: "You are a shop's assistant: answer with one call of your tools.",
          },
          {
            role: "user",
            content: "Please exchange the shoes of order 48213 for a size 42.",
          },
        ],
        output: {
          content: "",
          toolCalls: [
            {
              id: "c1",
              type: "function",
              function: { name: "exchange_item", arguments: '{"order_id": "48213", "size": 42}' },
            },
          ],
        },
      },
    },
  ],
});

/** What a rubric takes of its judge's context: the prompt of a typical judge call, and the answer room left. */
export type RubricFit =
  | { checked: true; promptTokens: number; answerTokens: number; contextLength: number }
  | { checked: false; reason: string };

/**
 * Counts the judge's prompt for `rubric` on a typical conversation with the judge's own tokenizer (its upstream's
 * vLLM-style `POST /tokenize`, which `arc engine serve` and vLLM answer with `count` and `max_model_len`), and
 * refuses the rubric (a 400 naming the sizes) when that prompt leaves less than the judge's answer room in its
 * context. An upstream that cannot count (no `/tokenize`, as hosted APIs) leaves the rubric unchecked, and says so.
 */
export async function checkRubricFits(
  rubric: Rubric,
  judge: Pick<JudgeModel, "upstream" | "model">,
  upstreams: JudgeUpstreams,
): Promise<RubricFit> {
  const upstream = upstreams[judge.upstream];
  if (!upstream) return { checked: false, reason: `the upstream ${judge.upstream} is not configured` };
  const key = upstream.apiKeyEnv ? process.env[upstream.apiKeyEnv] : undefined;
  const root = upstream.baseUrl.replace(/\/v1\/?$/, "");
  let counted: { count?: unknown; max_model_len?: unknown };
  try {
    const response = await fetch(`${root}/tokenize`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify({ model: judge.model, messages: judgeMessages(rubric, TYPICAL_TRACE) }),
      signal: AbortSignal.timeout(TOKENIZE_TIMEOUT_MS),
    });
    if (!response.ok)
      return {
        checked: false,
        reason: `${root}/tokenize answered ${response.status}: it cannot count tokens`,
      };
    counted = (await response.json()) as typeof counted;
  } catch (error) {
    return { checked: false, reason: `${root}/tokenize did not answer (${(error as Error).message})` };
  }
  const { count, max_model_len: contextLength } = counted;
  if (typeof count !== "number" || typeof contextLength !== "number")
    return { checked: false, reason: `${root}/tokenize names no count and max_model_len` };
  const room = contextLength - count;
  if (room < VERDICT_TOKENS)
    throw new InvalidInputError(
      `rubric: the judge's prompt with this rubric on a typical conversation takes ${count} tokens of ${judge.model}'s ` +
        `${contextLength}-token context, leaving ${Math.max(0, room)} for its ${VERDICT_TOKENS}-token verdict: ` +
        `shorten the rubric by at least ${VERDICT_TOKENS - room} tokens, or judge with a model of a longer context`,
      { field: "rubric" },
    );
  return { checked: true, promptTokens: count, answerTokens: VERDICT_TOKENS, contextLength };
}
