import type { WireChatMessage, WireStep, WireToolCall } from "../wire/wire-types.ts";
import { llmStep } from "./llm-step.ts";

/**
 * The Responses API (`client.responses.create`) as an `llm` step in the Chat Completions shape Arc stores: the
 * `instructions` and `input` items become chat messages, function tools become chat tools, the output items the
 * reply. Typed structurally, like the rest of the SDK, so it never imports `openai`.
 */

/** One content part of a Responses input or output message. */
interface ContentPartLike {
  type?: string;
  text?: string;
  image_url?: string;
  file_id?: string;
}

/** One item of `input` or of a response's `output`. */
interface ResponseItemLike {
  type?: string;
  role?: string;
  content?: string | ContentPartLike[];
  call_id?: string;
  name?: string;
  arguments?: string;
  output?: unknown;
}

/** A `response` object (non-streamed, or the one a stream's `response.completed` event carries). */
export interface ResponseLike {
  id?: string;
  model?: string;
  status?: string;
  incomplete_details?: { reason?: string } | null;
  output?: ResponseItemLike[];
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number } | null;
  _request_id?: string | null;
}

/** One event of a streamed response. */
export interface ResponseStreamEventLike {
  type?: string;
  delta?: string;
  response?: ResponseLike;
}

/** A Responses content part as a Chat Completions content part. */
function chatPart(part: ContentPartLike): Record<string, unknown> {
  if (part.type === "input_text" || part.type === "output_text")
    return { type: "text", text: part.text ?? "" };
  if (part.type === "input_image")
    return { type: "image_url", image_url: { url: part.image_url ?? part.file_id } };
  return { ...part };
}

/** `instructions` and `input` as chat messages: a system message, then each input item in order. */
function chatMessages(instructions: unknown, input: unknown): WireChatMessage[] {
  const messages: WireChatMessage[] = [];
  if (typeof instructions === "string" && instructions !== "")
    messages.push({ role: "system", content: instructions });
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return messages;
  }
  for (const item of Array.isArray(input) ? (input as ResponseItemLike[]) : []) {
    if (item.type === "function_call") {
      const call: WireToolCall = {
        id: item.call_id,
        type: "function",
        function: { name: item.name ?? "", arguments: item.arguments ?? "" },
      };
      const last = messages.at(-1);
      if (last?.role === "assistant" && Array.isArray(last.tool_calls))
        (last.tool_calls as WireToolCall[]).push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      const output = typeof item.output === "string" ? item.output : JSON.stringify(item.output ?? "");
      messages.push({ role: "tool", tool_call_id: item.call_id, content: output });
    } else if (item.role) {
      const content = Array.isArray(item.content) ? item.content.map(chatPart) : (item.content ?? "");
      messages.push({ role: item.role, content });
    } else {
      messages.push({ ...(item as Record<string, unknown>), role: "user" });
    }
  }
  return messages;
}

/** Function tools as Chat Completions tools; others (web search, file search...) as sent. */
function chatTools(tools: unknown[]): Record<string, unknown>[] {
  return tools.map((raw) => {
    const tool = raw as Record<string, unknown>;
    if (tool.type !== "function" || tool.function) return tool;
    const { type, name, description, parameters, strict } = tool;
    return { type, function: { name, description, parameters, ...(strict === undefined ? {} : { strict }) } };
  });
}

/** The request side of a `responses.create` step, taken when the call is made. */
export function responsesRequestStep(body: Record<string, unknown> | undefined): WireStep {
  const { model, input, instructions, tools, ...params } = body ?? {};
  const offered = Array.isArray(tools) ? chatTools(tools) : undefined;
  return llmStep("responses.create", model, chatMessages(instructions, input), offered, params);
}

/**
 * Fills the response side from a `response`: the served model, the output text and function calls, a finish
 * reason in the Chat Completions vocabulary (`stop`, `tool_calls`, or why it is incomplete, e.g.
 * `max_output_tokens`), usage; the response and request ids go to `metadata`.
 */
export function recordResponse(step: WireStep, response: ResponseLike): void {
  const llm = step.llm!;
  if (typeof response.model === "string") llm.modelServed = response.model;
  const items = response.output ?? [];
  const text = items
    .filter((item) => item.type === "message")
    .flatMap((item) => (Array.isArray(item.content) ? item.content : []))
    .filter((part) => part.type === "output_text")
    .map((part) => part.text ?? "")
    .join("");
  const toolCalls: WireToolCall[] = items
    .filter((item) => item.type === "function_call")
    .map((item) => ({
      id: item.call_id,
      type: "function",
      function: { name: item.name ?? "", arguments: item.arguments ?? "" },
    }));
  const hasMessage = items.some((item) => item.type === "message");
  llm.output = { content: hasMessage ? text : null, ...(toolCalls.length ? { toolCalls } : {}) };
  if (response.status === "completed") llm.finishReason = toolCalls.length ? "tool_calls" : "stop";
  else if (response.status) llm.finishReason = response.incomplete_details?.reason ?? response.status;
  if (response.usage) {
    llm.usage = {
      promptTokens: response.usage.input_tokens,
      completionTokens: response.usage.output_tokens,
      totalTokens: response.usage.total_tokens,
    };
  }
  const metadata: Record<string, unknown> = {};
  if (typeof response.id === "string") metadata.responseId = response.id;
  if (typeof response._request_id === "string") metadata.requestId = response._request_id;
  if (Object.keys(metadata).length > 0) step.metadata = { ...step.metadata, ...metadata };
}

/**
 * Folds a response's stream of events into the `response` it ends with: the one `response.completed` (or
 * `response.incomplete`/`response.failed`) carries, else the text deltas seen so far.
 */
export class ResponseStreamAccumulator {
  private final: ResponseLike | undefined;
  private started: ResponseLike | undefined;
  private text = "";

  /** Folds one event in. */
  add(event: ResponseStreamEventLike): void {
    if (event.type === "response.created" && event.response) this.started = event.response;
    else if (event.type === "response.output_text.delta" && typeof event.delta === "string")
      this.text += event.delta;
    else if (event.response && /^response\.(completed|incomplete|failed)$/.test(event.type ?? "")) {
      this.final = event.response;
    }
  }

  /** The response so far. */
  result(): ResponseLike {
    if (this.final) return this.final;
    return {
      ...this.started,
      status: "incomplete",
      output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: this.text }] }],
    };
  }
}
