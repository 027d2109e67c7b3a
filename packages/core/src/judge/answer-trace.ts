import { createHash } from "node:crypto";
import { Trace } from "../trace/index.ts";

/** When an answer's trace says it was written: fixed, so the trace (and a judge's cache key) is its content. */
const ANSWER_TIME = "2026-01-01T00:00:00.000Z";

/**
 * The trace a judge reads for one answer to a prompt: a single model call with the prompt's messages and tools and
 * the answer as its output. Its id is a hash of all three, so the same answer to the same prompt is judged once.
 */
export function answerTrace(
  messages: readonly object[],
  tools: readonly object[] | undefined,
  answer: string,
): Trace {
  const id = createHash("sha256")
    .update(JSON.stringify([messages, tools ?? null, answer]))
    .digest("hex")
    .slice(0, 32);
  return Trace.parse({
    id: `answer-${id}`,
    startedAt: ANSWER_TIME,
    steps: [
      {
        id: "answer",
        kind: "llm",
        startedAt: ANSWER_TIME,
        llm: { messages, ...(tools ? { tools } : {}), output: { content: answer } },
      },
    ],
  });
}
