import type { LlmProtocol } from "../openai/llm-protocol.ts";
import { llmStep, recordCompletion } from "../openai/llm-step.ts";
import type { ChatCompletionLike, ToolCallLike } from "../openai/openai-shapes.ts";
import type { WireLlmCall, WireStep } from "../wire/wire-types.ts";
import type {
  CallOptionsLike,
  ContentLike,
  FileDataLike,
  GenerateResultLike,
  LanguageModelLike,
  PromptMessageLike,
  PromptPartLike,
  StreamPartLike,
  UsageLike,
} from "./language-model-shapes.ts";

/** One language-model call of the AI SDK, as the middleware sees it. */
export interface AiSdkCall {
  operation: "doGenerate" | "doStream";
  model: LanguageModelLike;
  params: CallOptionsLike;
}

/** A file part's bytes or location as a URL: a `data:` URL for bytes and base64, the URL as it is otherwise. */
function fileUrl(part: PromptPartLike): string {
  const source = part.data;
  const mediaType = part.mediaType ?? "application/octet-stream";
  const base64 = (bytes: Uint8Array | string) =>
    typeof bytes === "string" ? bytes : Buffer.from(bytes).toString("base64");
  if (source instanceof URL) return source.href;
  if (source instanceof Uint8Array || typeof source === "string") {
    if (typeof source === "string" && /^(https?|data):/.test(source)) return source;
    return `data:${mediaType};base64,${base64(source)}`;
  }
  const data = source as FileDataLike | undefined;
  if (data?.type === "url" && data.url !== undefined) return String(data.url);
  if (data?.type === "text")
    return `data:${mediaType};base64,${Buffer.from(data.text ?? "").toString("base64")}`;
  if (data?.data !== undefined) return `data:${mediaType};base64,${base64(data.data)}`;
  return "";
}

/** A user message's parts as OpenAI content: a string when it is all text, else text and image/file parts. */
function userContent(parts: PromptPartLike[]): string | Record<string, unknown>[] {
  if (parts.every((p) => p.type === "text")) return parts.map((p) => p.text ?? "").join("");
  return parts.map((part) => {
    if (part.type === "text") return { type: "text", text: part.text ?? "" };
    if (part.type === "file" && part.mediaType?.startsWith("image/"))
      return { type: "image_url", image_url: { url: fileUrl(part) } };
    if (part.type === "file")
      return { type: "file", file: { filename: part.filename, file_data: fileUrl(part) } };
    return { type: part.type };
  });
}

/** A tool result's output as the text of an OpenAI `tool` message. */
function toolResultText(output: PromptPartLike["output"]): string {
  if (!output) return "";
  if (output.type === "text" || output.type === "error-text") return String(output.value ?? "");
  if (output.type === "execution-denied") return output.reason ?? "execution denied";
  return JSON.stringify(output.value ?? null);
}

/** The prompt as OpenAI chat messages: tool calls as `tool_calls`, tool results as `tool` messages. */
export function openAIMessages(prompt: readonly PromptMessageLike[]): WireLlmCall["messages"] {
  return prompt.flatMap((message): WireLlmCall["messages"] => {
    if (typeof message.content === "string") return [{ role: message.role, content: message.content }];
    const parts = message.content;
    if (message.role === "user") return [{ role: "user", content: userContent(parts) }];
    if (message.role === "tool") {
      return parts
        .filter((p) => p.type === "tool-result")
        .map((p) => ({ role: "tool", tool_call_id: p.toolCallId, content: toolResultText(p.output) }));
    }
    const text = parts.filter((p) => p.type === "text").map((p) => p.text ?? "");
    const calls = parts
      .filter((p) => p.type === "tool-call")
      .map((p) => ({
        id: p.toolCallId,
        type: "function",
        function: {
          name: p.toolName,
          arguments: typeof p.input === "string" ? p.input : JSON.stringify(p.input ?? {}),
        },
      }));
    return [
      {
        role: message.role,
        content: text.length > 0 ? text.join("") : null,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      },
    ];
  });
}

/** The request fields other than the prompt and tools, named as OpenAI's chat completions name them. */
function requestParams(options: CallOptionsLike): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  const set = (name: string, value: unknown) => {
    if (value !== undefined) params[name] = value;
  };
  set("max_tokens", options.maxOutputTokens);
  set("temperature", options.temperature);
  set("top_p", options.topP);
  set("top_k", options.topK);
  set("stop", options.stopSequences);
  set("seed", options.seed);
  set("presence_penalty", options.presencePenalty);
  set("frequency_penalty", options.frequencyPenalty);
  const choice = options.toolChoice;
  if (choice)
    params.tool_choice =
      choice.type === "tool" ? { type: "function", function: { name: choice.toolName } } : choice.type;
  const format = options.responseFormat;
  if (format?.type === "json")
    params.response_format = format.schema
      ? { type: "json_schema", json_schema: { name: format.name ?? "response", schema: format.schema } }
      : { type: "json_object" };
  return params;
}

/**
 * The request side of an `llm` step for a call of the AI SDK's language model: named after the model method
 * (`languageModel.doGenerate` / `.doStream`), the model id as requested, the prompt as OpenAI chat messages, the
 * function tools as OpenAI tools, and the other options; the provider goes to `metadata`.
 */
export function aiSdkRequestStep(call: AiSdkCall): WireStep {
  const functionTools = (call.params.tools ?? []).filter((t) => t.type === "function");
  const tools =
    functionTools.length > 0
      ? functionTools.map((t) => ({
          type: "function",
          function: {
            name: t.name,
            ...(t.description !== undefined ? { description: t.description } : {}),
            parameters: t.inputSchema,
          },
        }))
      : undefined;
  const step = llmStep(
    `languageModel.${call.operation}`,
    call.model.modelId,
    openAIMessages(call.params.prompt ?? []),
    tools as WireLlmCall["tools"],
    requestParams(call.params),
  );
  if (call.model.provider) step.metadata = { ...step.metadata, provider: call.model.provider };
  return step;
}

/** OpenAI's finish reason for the AI SDK's. */
function finishReason(reason: GenerateResultLike["finishReason"]): string | null {
  const unified = typeof reason === "string" ? reason : (reason?.unified ?? reason?.raw);
  const names: Record<string, string> = {
    stop: "stop",
    length: "length",
    "tool-calls": "tool_calls",
    "content-filter": "content_filter",
  };
  return unified === undefined ? null : (names[unified] ?? unified);
}

const tokens = (count: UsageLike["inputTokens"]) => (typeof count === "number" ? count : count?.total);

/** A result of the AI SDK's model as the completion `recordCompletion` reads. */
export function completionOf(result: GenerateResultLike): ChatCompletionLike {
  const content = result.content ?? [];
  const text = content.filter((c) => c.type === "text").map((c) => c.text ?? "");
  const toolCalls: ToolCallLike[] = content
    .filter((c) => c.type === "tool-call")
    .map((c) => ({ id: c.toolCallId, type: "function", function: { name: c.toolName, arguments: c.input } }));
  const prompt = tokens(result.usage?.inputTokens);
  const completion = tokens(result.usage?.outputTokens);
  return {
    id: result.response?.id,
    model: result.response?.modelId,
    choices: [
      {
        index: 0,
        finish_reason: finishReason(result.finishReason),
        message: { content: text.length > 0 ? text.join("") : null, tool_calls: toolCalls },
      },
    ],
    usage:
      prompt === undefined && completion === undefined
        ? null
        : {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt !== undefined && completion !== undefined ? prompt + completion : undefined,
          },
  };
}

/** Assembles the parts of a `doStream` stream into the result `doGenerate` would have returned. */
export class AiSdkStreamAccumulator {
  private readonly texts = new Map<string, string>();
  private readonly calls: ContentLike[] = [];
  private readonly result_: GenerateResultLike = {};

  add(part: StreamPartLike): void {
    if (part.type === "text-delta") {
      const id = part.id ?? "";
      this.texts.set(id, (this.texts.get(id) ?? "") + (part.delta ?? part.text ?? ""));
    } else if (part.type === "tool-call") {
      this.calls.push({
        type: "tool-call",
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        input: part.input,
      });
    } else if (part.type === "finish") {
      this.result_.finishReason = part.finishReason;
      this.result_.usage = part.usage;
    } else if (part.type === "response-metadata") {
      this.result_.response = { id: part.id, modelId: part.modelId };
    }
  }

  result(): GenerateResultLike {
    const text = [...this.texts.values()].map((t): ContentLike => ({ type: "text", text: t }));
    return { ...this.result_, content: [...text, ...this.calls] };
  }
}

/** Calls of the AI SDK's language models (through `arc.languageModelMiddleware()`). */
export const AI_SDK: LlmProtocol = {
  requestStep: (body) => aiSdkRequestStep(body as AiSdkCall),
  record: (step, result) => recordCompletion(step, completionOf(result as GenerateResultLike)),
  accumulator: () => {
    const acc = new AiSdkStreamAccumulator();
    return { add: (part) => acc.add(part as StreamPartLike), result: () => acc.result() };
  },
};
