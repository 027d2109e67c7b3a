import { createHash } from "node:crypto";
import { taskPrompt } from "../families/registry.ts";
import type { Task } from "../rollout/index.ts";
import { parseToolCall } from "../tasks/parse-tool-call.ts";
import type { TaskFamily } from "../tasks/task-family.ts";
import { toOpenAiTools } from "../tasks/tool-spec.ts";
import { Trace } from "../trace/index.ts";

/** When an answer's trace says it was written: fixed, so the trace (and a judge's cache key) is its content. */
const ANSWER_TIME = "2026-01-01T00:00:00.000Z";

/** A tool's name in OpenAI's form (`{type, function: {name}}`) or a family's (`{name}`). */
function toolName(tool: object): string | undefined {
  const t = tool as { name?: unknown; function?: { name?: unknown } };
  const name = t.function?.name ?? t.name;
  return typeof name === "string" ? name : undefined;
}

/**
 * The answer as the gateway records a model's output: a `{"tool","args"}` call of one of the offered tools becomes
 * a tool call, anything else stays text.
 */
function answerOutput(tools: readonly object[] | undefined, answer: string) {
  const parsed = tools?.length ? parseToolCall(answer) : undefined;
  if (!parsed?.ok || !tools?.some((tool) => toolName(tool) === parsed.call.tool)) return { content: answer };
  return {
    content: null,
    toolCalls: [
      {
        id: "call_0",
        type: "function",
        function: { name: parsed.call.tool, arguments: JSON.stringify(parsed.call.args) },
      },
    ],
  };
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
  return answerTrace(messages, tools ?? (family.tools ? toOpenAiTools(family.tools) : undefined), answer);
}
