import { type ChatMessage, parseBoundedJson, type ToolCall } from "@arc/core";

/** A message part of the OTel GenAI conventions (`gen_ai.input.messages` / `gen_ai.output.messages`). */
interface GenAiPart {
  type: string;
  content?: unknown;
  id?: string;
  name?: string;
  arguments?: unknown;
  response?: unknown;
  result?: unknown;
  uri?: string;
  url?: string;
  mime_type?: string;
  modality?: string;
}

interface GenAiMessage {
  role: string;
  parts?: GenAiPart[];
  finish_reason?: string;
}

/**
 * Attributes may carry the messages as a JSON string (what SDKs emit) or as structured values. JSON text is held to
 * the body reader's bounds (an InvalidInputError names the attribute); text that is not JSON reads as undefined.
 */
export function parseJsonAttribute(value: unknown, attribute: string): unknown {
  if (typeof value !== "string") return value;
  return parseBoundedJson(value, attribute);
}

function asText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function toolCallOf(part: GenAiPart): ToolCall {
  return {
    id: part.id,
    type: "function",
    function: {
      name: part.name ?? "",
      arguments: part.arguments === undefined ? "" : asText(part.arguments),
    },
  };
}

/** Turns GenAI-convention messages into OpenAI chat messages (tool responses become `tool` messages). */
export function toOpenAiMessages(messages: unknown): ChatMessage[] {
  if (!Array.isArray(messages)) return [];
  const out: ChatMessage[] = [];
  for (const raw of messages as GenAiMessage[]) {
    if (!raw || typeof raw !== "object") continue;
    const parts = Array.isArray(raw.parts) ? raw.parts : [];
    const text = parts.filter((p) => p.type === "text").map((p) => asText(p.content));
    const media = parts
      .filter((p) => p.type === "uri" || p.type === "image-url")
      .map((p) => ({ type: "image_url", image_url: { url: p.uri ?? p.url ?? "" } }));
    const toolCalls = parts.filter((p) => p.type === "tool_call").map(toolCallOf);
    for (const response of parts.filter((p) => p.type === "tool_call_response")) {
      out.push({
        role: "tool",
        tool_call_id: response.id,
        content: asText(response.response ?? response.result),
      });
    }
    if (text.length === 0 && media.length === 0 && toolCalls.length === 0) continue;
    const role = (
      ["system", "user", "assistant", "tool", "developer"].includes(raw.role) ? raw.role : "user"
    ) as "system" | "user" | "assistant" | "tool" | "developer";
    const content =
      media.length > 0
        ? [...text.map((t) => ({ type: "text", text: t })), ...media]
        : text.length
          ? text.join("")
          : null;
    out.push(toolCalls.length > 0 ? { role, content, tool_calls: toolCalls } : { role, content });
  }
  return out;
}

/** The first output message's text, tool calls and finish reason. */
export function outputOf(messages: unknown): {
  content: string | null;
  toolCalls?: ToolCall[];
  finishReason?: string;
} {
  const first = Array.isArray(messages) ? (messages[0] as GenAiMessage | undefined) : undefined;
  const parts = first?.parts ?? [];
  const text = parts.filter((p) => p.type === "text").map((p) => asText(p.content));
  const toolCalls = parts.filter((p) => p.type === "tool_call").map(toolCallOf);
  return {
    content: text.length ? text.join("") : null,
    ...(toolCalls.length ? { toolCalls } : {}),
    ...(first?.finish_reason ? { finishReason: first.finish_reason } : {}),
  };
}
