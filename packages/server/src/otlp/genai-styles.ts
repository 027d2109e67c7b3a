import type { ChatMessage, StepKind, ToolCall } from "@arc/core";
import { parseJsonAttribute } from "./genai-messages.ts";

/**
 * The attribute styles instrumentations other than the current GenAI semantic conventions use for an LLM call:
 * OpenLLMetry (`gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, `llm.request.functions.N.*`), OpenInference
 * (`llm.input_messages.N.message.*`, `llm.output_messages.N.*`, `llm.tools.N.tool.json_schema`) and the Vercel AI
 * SDK (`ai.prompt.messages`, `ai.prompt.tools`, `ai.response.*`). Each reader takes the attributes it reads out of
 * the map, so what is left becomes the step's metadata.
 */

/** What a style gives of an LLM call, in Arc's (OpenAI's) shapes. */
export interface StyledLlmCall {
  messages: ChatMessage[];
  tools?: Record<string, unknown>[];
  output: { content: string | null; toolCalls?: ToolCall[] };
  finishReason?: string;
  model?: string;
  params?: Record<string, unknown>;
  inputTokens?: number;
  outputTokens?: number;
}

type Attributes = Record<string, unknown>;

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

/** Removes and returns an attribute. */
function take(attrs: Attributes, key: string): unknown {
  const value = attrs[key];
  delete attrs[key];
  return value;
}

/**
 * Takes every attribute under `prefix.` and rebuilds the nested value its dotted keys flatten: a numeric segment
 * indexes a list (`gen_ai.prompt.0.tool_calls.1.name` → `[{tool_calls: [, {name}]}]`). Undefined when none.
 */
export function unflatten(attrs: Attributes, prefix: string): unknown {
  const start = `${prefix}.`;
  const keys = Object.keys(attrs).filter((k) => k.startsWith(start));
  if (keys.length === 0) return undefined;
  const root: Record<string, unknown> = Object.create(null);
  for (const key of keys) {
    const parts = key.slice(start.length).split(".");
    let node: Record<string, unknown> = root;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (typeof next !== "object" || next === null) node[part] = Object.create(null);
      node = node[part] as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = take(attrs, key);
  }
  return listify(root);
}

/** Turns objects whose keys are all indices into lists, in index order, all the way down. */
function listify(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys.sort((a, b) => Number(a) - Number(b)).map((k) => listify(record[k]));
  }
  for (const k of keys) record[k] = listify(record[k]);
  return record;
}

const asList = (value: unknown): Attributes[] =>
  Array.isArray(value) ? value.filter((v): v is Attributes => typeof v === "object" && v !== null) : [];
const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value ?? ""));
const asNumber = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;
const roleOf = (role: unknown): ChatMessage["role"] =>
  (typeof role === "string" && ROLES.has(role) ? role : "user") as ChatMessage["role"];

/** A message's content: text, or OpenAI content parts when the instrumentation recorded a list of parts as JSON. */
function contentOf(value: unknown, attribute: string): ChatMessage["content"] {
  if (value === undefined || value === null) return null;
  const parsed =
    typeof value === "string" && value.startsWith("[") ? parseJsonAttribute(value, attribute) : value;
  if (Array.isArray(parsed) && parsed.every((p) => typeof p === "object" && p !== null && "type" in p)) {
    return parsed as { type: string }[];
  }
  return asText(value);
}

function toolCall(id: unknown, name: unknown, args: unknown): ToolCall {
  return {
    ...(typeof id === "string" ? { id } : {}),
    type: "function",
    function: { name: asText(name ?? ""), arguments: args === undefined ? "" : asText(args) },
  };
}

/** An OpenAI chat message from its parts; tool calls and a tool call id only where present. */
function message(
  role: ChatMessage["role"],
  content: ChatMessage["content"],
  toolCalls: ToolCall[],
  toolCallId: unknown,
): ChatMessage {
  return {
    role,
    content,
    ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    ...(typeof toolCallId === "string" ? { tool_call_id: toolCallId } : {}),
  };
}

/** OpenLLMetry (Traceloop): `gen_ai.prompt.N.*`, `gen_ai.completion.N.*`, `llm.request.functions.N.*`. */
export function readOpenLlmetry(attrs: Attributes): StyledLlmCall | undefined {
  const prompt = asList(unflatten(attrs, "gen_ai.prompt"));
  const completion = asList(unflatten(attrs, "gen_ai.completion"));
  if (prompt.length === 0 && completion.length === 0) return undefined;
  const read = (m: Attributes, at: string) =>
    message(
      roleOf(m.role),
      contentOf(m.content, `${at}.content`),
      asList(m.tool_calls).map((c) => toolCall(c.id, c.name, c.arguments)),
      m.tool_call_id,
    );
  const first = completion[0] ? read(completion[0], "gen_ai.completion.0") : undefined;
  const functions = asList(unflatten(attrs, "llm.request.functions"));
  return {
    messages: prompt.map((m, i) => read(m, `gen_ai.prompt.${i}`)),
    tools: functions.length
      ? functions.map((f) => ({
          type: "function",
          function: {
            name: f.name,
            ...(f.description === undefined ? {} : { description: f.description }),
            parameters: parseJsonAttribute(f.parameters, "llm.request.functions.parameters") ?? {},
          },
        }))
      : undefined,
    output: {
      content: typeof first?.content === "string" ? first.content : null,
      ...(first?.tool_calls ? { toolCalls: first.tool_calls as ToolCall[] } : {}),
    },
    finishReason: typeof completion[0]?.finish_reason === "string" ? completion[0].finish_reason : undefined,
    inputTokens: asNumber(take(attrs, "gen_ai.usage.prompt_tokens")),
    outputTokens: asNumber(take(attrs, "gen_ai.usage.completion_tokens")),
  };
}

/** OpenInference (Arize Phoenix): `llm.input_messages.N.message.*`, `llm.output_messages.N.*`, `llm.tools.N.*`. */
export function readOpenInference(attrs: Attributes): StyledLlmCall | undefined {
  const input = asList(unflatten(attrs, "llm.input_messages"));
  const output = asList(unflatten(attrs, "llm.output_messages"));
  if (input.length === 0 && output.length === 0) return undefined;
  const read = (entry: Attributes): ChatMessage => {
    const m = (entry.message ?? {}) as Attributes;
    const parts = asList(m.contents).map((c) => (c.message_content ?? {}) as Attributes);
    const content: ChatMessage["content"] = parts.length
      ? parts.map((p) =>
          p.type === "image"
            ? { type: "image_url", image_url: { url: ((p.image as Attributes)?.image as Attributes)?.url } }
            : { type: "text", text: asText(p.text) },
        )
      : m.content === undefined
        ? null
        : asText(m.content);
    const calls = asList(m.tool_calls).map((c) => {
      const call = (c.tool_call ?? {}) as Attributes;
      const fn = (call.function ?? {}) as Attributes;
      return toolCall(call.id, fn.name, fn.arguments);
    });
    return message(roleOf(m.role), content, calls, m.tool_call_id);
  };
  const first = output[0] ? read(output[0]) : undefined;
  const tools = asList(unflatten(attrs, "llm.tools")).map((t) =>
    parseJsonAttribute((t.tool as Attributes)?.json_schema, "llm.tools.tool.json_schema"),
  );
  const invocation = parseJsonAttribute(
    take(attrs, "llm.invocation_parameters"),
    "llm.invocation_parameters",
  );
  const model = take(attrs, "llm.model_name");
  const tokens = unflatten(attrs, "llm.token_count") as Attributes | undefined;
  return {
    messages: input.map(read),
    tools: tools.length
      ? (tools.filter((t) => typeof t === "object" && t !== null) as Attributes[])
      : undefined,
    output: {
      content: typeof first?.content === "string" ? first.content : null,
      ...(first?.tool_calls ? { toolCalls: first.tool_calls as ToolCall[] } : {}),
    },
    model: typeof model === "string" ? model : undefined,
    params: typeof invocation === "object" && invocation !== null ? (invocation as Attributes) : undefined,
    inputTokens: asNumber(tokens?.prompt),
    outputTokens: asNumber(tokens?.completion),
  };
}

/** One Vercel AI SDK prompt message (`ai.prompt.messages`) as OpenAI chat messages (a tool result per message). */
function vercelMessages(raw: Attributes): ChatMessage[] {
  const role = roleOf(raw.role);
  if (typeof raw.content === "string" || !Array.isArray(raw.content)) {
    return [message(role, raw.content === undefined ? null : asText(raw.content), [], undefined)];
  }
  const parts = asList(raw.content);
  if (role === "tool") {
    return parts
      .filter((p) => p.type === "tool-result")
      .map((p) => {
        const result = p.output ?? p.result;
        const value = (result as Attributes | undefined)?.value ?? result;
        return message("tool", asText(value), [], p.toolCallId);
      });
  }
  type Part = { type: string; text?: string; image_url?: { url: string } };
  const content = parts.flatMap((p): Part[] => {
    if (p.type === "text") return [{ type: "text", text: asText(p.text) }];
    if (p.type === "image") return [{ type: "image_url", image_url: { url: asText(p.image) } }];
    if (p.type === "file" && typeof p.data === "string") {
      return [{ type: "image_url", image_url: { url: p.data } }];
    }
    return [];
  });
  const calls = parts
    .filter((p) => p.type === "tool-call")
    .map((p) => toolCall(p.toolCallId, p.toolName, p.input ?? p.args));
  const onlyText = content.every((c) => c.type === "text");
  return [
    message(
      role,
      content.length === 0 ? null : onlyText ? content.map((c) => c.text ?? "").join("") : content,
      calls,
      undefined,
    ),
  ];
}

/** The Vercel AI SDK's `ai.*` telemetry on a model call span (`ai.generateText.doGenerate`, `ai.streamText.doStream`). */
export function readVercelAi(attrs: Attributes): StyledLlmCall | undefined {
  const prompt = parseJsonAttribute(take(attrs, "ai.prompt.messages"), "ai.prompt.messages");
  const text = take(attrs, "ai.response.text");
  const calls = parseJsonAttribute(take(attrs, "ai.response.toolCalls"), "ai.response.toolCalls");
  if (prompt === undefined && text === undefined && calls === undefined) return undefined;
  const rawTools = take(attrs, "ai.prompt.tools");
  const tools = (Array.isArray(rawTools) ? rawTools : [])
    .map((t) => parseJsonAttribute(t, "ai.prompt.tools") as Attributes | undefined)
    .filter((t): t is Attributes => typeof t === "object" && t !== null)
    .map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description === undefined ? {} : { description: t.description }),
        parameters: t.inputSchema ?? t.parameters ?? {},
      },
    }));
  const toolCalls = asList(calls).map((c) => toolCall(c.toolCallId, c.toolName, c.input ?? c.args));
  const finish = take(attrs, "ai.response.finishReason");
  const model = take(attrs, "ai.model.id");
  return {
    messages: asList(prompt).flatMap(vercelMessages),
    tools: tools.length ? tools : undefined,
    output: { content: typeof text === "string" ? text : null, ...(toolCalls.length ? { toolCalls } : {}) },
    finishReason: typeof finish === "string" ? finish : undefined,
    model: typeof model === "string" ? model : undefined,
    inputTokens: asNumber(take(attrs, "ai.usage.inputTokens") ?? take(attrs, "ai.usage.promptTokens")),
    outputTokens: asNumber(take(attrs, "ai.usage.outputTokens") ?? take(attrs, "ai.usage.completionTokens")),
  };
}

/** Vercel AI SDK span operations that are one model call. */
const VERCEL_MODEL_CALLS = /^ai\.(generateText|streamText|generateObject|streamObject)\.do(Generate|Stream)$/;

/**
 * The step kind a span's non-GenAI-convention attributes imply: OpenInference's `openinference.span.kind`,
 * OpenLLMetry's `llm.request.type` and `traceloop.span.kind`, the Vercel AI SDK's `ai.operationId`. Undefined when
 * none says.
 */
export function styledStepKind(attrs: Attributes): StepKind | undefined {
  const openInference = attrs["openinference.span.kind"];
  if (typeof openInference === "string") {
    const kind = openInference.toUpperCase();
    if (kind === "LLM") return "llm";
    if (kind === "TOOL") return "tool";
    if (kind === "RETRIEVER" || kind === "EMBEDDING" || kind === "RERANKER") return "retrieval";
    return "custom";
  }
  const requestType = attrs["llm.request.type"];
  if (requestType === "chat" || requestType === "completion") return "llm";
  if (attrs["traceloop.span.kind"] === "tool") return "tool";
  const operation = attrs["ai.operationId"];
  if (typeof operation === "string") {
    if (VERCEL_MODEL_CALLS.test(operation)) return "llm";
    if (operation === "ai.toolCall") return "tool";
    return "custom";
  }
  return undefined;
}

/** A tool span's name, arguments and result in the OpenInference, OpenLLMetry or Vercel AI SDK style. */
export function styledToolCall(attrs: Attributes): { name?: string; input?: unknown; output?: unknown } {
  const vercelName = take(attrs, "ai.toolCall.name");
  if (typeof vercelName === "string") {
    return {
      name: vercelName,
      input: parseJsonAttribute(
        take(attrs, "ai.toolCall.args") ?? take(attrs, "ai.toolCall.input"),
        "ai.toolCall.args",
      ),
      output: parseJsonAttribute(
        take(attrs, "ai.toolCall.result") ?? take(attrs, "ai.toolCall.output"),
        "ai.toolCall.result",
      ),
    };
  }
  const name = take(attrs, "tool.name") ?? take(attrs, "traceloop.entity.name");
  const input = take(attrs, "input.value") ?? take(attrs, "traceloop.entity.input");
  const output = take(attrs, "output.value") ?? take(attrs, "traceloop.entity.output");
  return {
    name: typeof name === "string" ? name : undefined,
    input: input === undefined ? undefined : (parseJsonAttribute(input, "input.value") ?? input),
    output: output === undefined ? undefined : (parseJsonAttribute(output, "output.value") ?? output),
  };
}
