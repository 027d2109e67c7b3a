import { llmSteps } from "../detect/trace-view.ts";
import type { Trace } from "../trace/index.ts";
import type { Rubric } from "./rubric.ts";

/** Characters of one message the judge is shown; longer ones are cut in the middle. */
const MESSAGE_CHARS = 2000;

/** A message's content as text: string content, text parts, `[image]` for an image part. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: { type?: string; text?: unknown }) =>
      part.type === "text" ? String(part.text ?? "") : part.type === "image_url" ? "[image]" : "",
    )
    .join("");
}

function clip(text: string): string {
  if (text.length <= MESSAGE_CHARS) return text;
  const half = MESSAGE_CHARS / 2;
  return `${text.slice(0, half)} […${text.length - MESSAGE_CHARS} characters…] ${text.slice(-half)}`;
}

/** A tool call as the judge reads it: `calls name(arguments)` on its own line. */
function callsText(
  toolCalls: readonly { function: { name: string; arguments: string } }[] | undefined,
): string {
  return (toolCalls ?? []).map((c) => `\n  calls ${c.function.name}(${c.function.arguments})`).join("");
}

/** A conversation's messages as the judge reads them: `[role] content`, each tool call as `name(arguments)`. */
export function conversationLines(messages: readonly unknown[]): string[] {
  return messages.map((m) => {
    const message = m as {
      role: string;
      content?: unknown;
      tool_calls?: { function: { name: string; arguments: string } }[];
    };
    return `[${message.role}] ${clip(contentText(message.content))}${callsText(message.tool_calls)}`;
  });
}

/** An answer as the judge reads it: its text, and its tool calls as `name(arguments)`. */
export function answerText(
  answer: string,
  toolCalls?: readonly { function: { name: string; arguments: string } }[],
): string {
  return `${clip(answer)}${callsText(toolCalls)}`;
}

/**
 * The conversation the judge reads: the last model call's messages (which hold the earlier turns), each tool call
 * as `name(arguments)`, then the answer under judgement, marked as such.
 */
export function judgedTranscript(trace: Trace): string {
  const steps = llmSteps(trace);
  const last = steps.at(-1)?.llm;
  if (!last) return "(the trace has no model call)";
  const lines = conversationLines(last.messages);
  lines.push(
    `[assistant — the answer to judge] ${answerText(last.output?.content ?? "", last.output?.toolCalls)}`,
  );
  return lines.join("\n");
}

/** The rubric as the judge's instructions read it: what a good answer does, and the failure classes. */
export function rubricLines(rubric: Rubric): string[] {
  return [
    rubric.instructions ?? "",
    "A good answer:",
    ...rubric.criteria.map((c) => `- ${c}`),
    "Failure classes (name: meaning):",
    ...rubric.classes.map((c) => `- ${c.name}: ${c.description}`),
  ].filter((line) => line !== "");
}

/** The chat that asks the judge for its structured verdict on one trace. */
export function judgeMessages(rubric: Rubric, trace: Trace): { role: "system" | "user"; content: string }[] {
  const system = [
    "You judge one answer of an AI agent against a rubric. Read the conversation and the answer under judgement.",
    ...rubricLines(rubric),
    'Reply with one JSON object: {"failed": true|false, "class": a failure class or "none", "severity": "none"|"low"|"medium"|"high", "evidence": a short quote from the conversation that shows it, "confidence": a number from 0 to 1}.',
  ].filter((line) => line !== "");
  return [
    { role: "system", content: system.join("\n") },
    { role: "user", content: judgedTranscript(trace) },
  ];
}
