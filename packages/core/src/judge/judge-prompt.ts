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

/**
 * The conversation the judge reads: the last model call's messages (which hold the earlier turns), each tool call
 * as `name(arguments)`, then the answer under judgement, marked as such.
 */
export function judgedTranscript(trace: Trace): string {
  const steps = llmSteps(trace);
  const last = steps.at(-1)?.llm;
  if (!last) return "(the trace has no model call)";
  const calls = (toolCalls: readonly { function: { name: string; arguments: string } }[] | undefined) =>
    (toolCalls ?? []).map((c) => `\n  calls ${c.function.name}(${c.function.arguments})`).join("");
  const lines = last.messages.map((m) => {
    const message = m as {
      role: string;
      content?: unknown;
      tool_calls?: { function: { name: string; arguments: string } }[];
    };
    return `[${message.role}] ${clip(contentText(message.content))}${calls(message.tool_calls)}`;
  });
  const output = last.output;
  lines.push(`[assistant — the answer to judge] ${clip(output?.content ?? "")}${calls(output?.toolCalls)}`);
  return lines.join("\n");
}

/** The chat that asks the judge for its structured verdict on one trace. */
export function judgeMessages(rubric: Rubric, trace: Trace): { role: "system" | "user"; content: string }[] {
  const system = [
    "You judge one answer of an AI agent against a rubric. Read the conversation and the answer under judgement.",
    rubric.instructions ?? "",
    "A good answer:",
    ...rubric.criteria.map((c) => `- ${c}`),
    "Failure classes (name: meaning):",
    ...rubric.classes.map((c) => `- ${c.name}: ${c.description}`),
    'Reply with one JSON object: {"failed": true|false, "class": a failure class or "none", "severity": "none"|"low"|"medium"|"high", "evidence": a short quote from the conversation that shows it, "confidence": a number from 0 to 1}.',
  ].filter((line) => line !== "");
  return [
    { role: "system", content: system.join("\n") },
    { role: "user", content: judgedTranscript(trace) },
  ];
}
