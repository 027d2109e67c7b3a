import { isoNow } from "../trace/iso-now.ts";
import { randomId } from "../trace/random-id.ts";
import type { WireLlmCall, WireStep, WireToolCall, WireUsage } from "../wire/wire-types.ts";
import type { ChatCompletionLike, ChatRequestLike, ToolCallLike, UsageLike } from "./openai-shapes.ts";

/**
 * The request side of an `llm` step, taken when the call is made. The messages and tools arrays are copied
 * (agents commonly push onto their `messages` array after each call); the message objects are not.
 */
export function llmRequestStep(body: ChatRequestLike | undefined): WireStep {
  const { model, messages, tools, ...params } = body ?? {};
  return llmStep(
    "chat.completions.create",
    model,
    Array.isArray(messages) ? (messages.slice() as WireLlmCall["messages"]) : [],
    Array.isArray(tools) ? (tools.slice() as WireLlmCall["tools"]) : undefined,
    params,
  );
}

/** A new `llm` step named after the endpoint, with the request's model, messages, tools and other fields. */
export function llmStep(
  name: string,
  model: unknown,
  messages: WireLlmCall["messages"],
  tools: WireLlmCall["tools"],
  params: Record<string, unknown>,
): WireStep {
  const llm: WireLlmCall = { messages };
  if (typeof model === "string") llm.modelRequested = model;
  if (tools) llm.tools = tools;
  if (Object.keys(params).length > 0) llm.params = params;
  return { id: randomId(), kind: "llm", name, startedAt: isoNow(), llm };
}

function toolCall(call: ToolCallLike): WireToolCall {
  const wire: WireToolCall = {
    type: call.type ?? "function",
    function: { name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" },
  };
  if (call.id !== undefined) wire.id = call.id;
  return wire;
}

function usage(raw: UsageLike): WireUsage {
  const u: WireUsage = {};
  if (typeof raw.prompt_tokens === "number") u.promptTokens = raw.prompt_tokens;
  if (typeof raw.completion_tokens === "number") u.completionTokens = raw.completion_tokens;
  if (typeof raw.total_tokens === "number") u.totalTokens = raw.total_tokens;
  return u;
}

/**
 * Fills the response side of an `llm` step from a completion (a streamed one is assembled into the same shape
 * first): the served model, its fingerprint, the first choice's output and finish reason, usage; the response
 * id, request id, token details, a refusal and any further choices (n > 1) go to `metadata`.
 */
export function recordCompletion(step: WireStep, completion: ChatCompletionLike): void {
  const llm = step.llm!;
  const metadata: Record<string, unknown> = {};
  if (typeof completion.model === "string") llm.modelServed = completion.model;
  if (typeof completion.system_fingerprint === "string") llm.modelVersion = completion.system_fingerprint;
  const [first, ...others] = completion.choices ?? [];
  if (first) {
    const message = first.message ?? {};
    llm.output = { content: message.content ?? null };
    if (message.tool_calls && message.tool_calls.length > 0)
      llm.output.toolCalls = message.tool_calls.map(toolCall);
    if (first.finish_reason) llm.finishReason = first.finish_reason;
    if (message.refusal) metadata.refusal = message.refusal;
  }
  if (others.length > 0) {
    metadata.otherChoices = others.map((choice) => ({
      content: choice.message?.content ?? null,
      toolCalls: choice.message?.tool_calls?.map(toolCall),
      finishReason: choice.finish_reason ?? undefined,
    }));
  }
  if (completion.usage) {
    llm.usage = usage(completion.usage);
    const { prompt_tokens_details, completion_tokens_details } = completion.usage;
    if (prompt_tokens_details || completion_tokens_details)
      metadata.usageDetails = { prompt_tokens_details, completion_tokens_details };
  }
  if (typeof completion.id === "string") metadata.responseId = completion.id;
  if (typeof completion._request_id === "string") metadata.requestId = completion._request_id;
  if (Object.keys(metadata).length > 0) step.metadata = { ...step.metadata, ...metadata };
}
