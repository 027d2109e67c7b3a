import { createHash } from "node:crypto";
import { taskPrompt } from "../families/registry.ts";
import type { Task } from "../rollout/index.ts";
import { offeredToolCall, offeredToolNames, offeredTools } from "../tasks/offered-tools.ts";
import type { TaskFamily } from "../tasks/task-family.ts";
import { Trace } from "../trace/index.ts";

/** When an answer's trace says it was written: fixed, so the trace (and a judge's cache key) is its content. */
const ANSWER_TIME = "2026-01-01T00:00:00.000Z";

/**
 * The answer as the gateway records a model's output: a `{"tool","args"}` call of one of the offered tools becomes
 * a tool call, anything else stays text.
 */
function answerOutput(tools: readonly object[] | undefined, answer: string) {
  const call = offeredToolCall(answer, offeredToolNames(tools), "call_0");
  return call ? { content: null, toolCalls: [call] } : { content: answer };
}

/**
 * The trace a judge reads for one answer to a prompt: a single model call with the prompt's messages and tools and
 * the answer as its output, a call of an offered tool as a tool call (as production traces hold it). Its id is a
 * hash of all three, so the same answer to the same prompt is judged once.
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
        llm: { messages, ...(tools ? { tools } : {}), output: answerOutput(tools, answer) },
      },
    ],
  });
}

/**
 * The trace a judge reads for an answer to a family's task: the task's prompt, the tools it offered (the family's
 * where the task recorded none, as the family's agent offers them), and the answer.
 */
export function taskAnswerTrace(family: TaskFamily, task: Task, answer: string): Trace {
  const { messages, tools } = taskPrompt(family, task);
  return answerTrace(messages, offeredTools(tools, family), answer);
}
