import type { ChatToolCall, GenRequest } from "@arc/core";
import { checkGrammarSchema, GrammarSizeBudget } from "../grammar/schema-check.ts";
import { CHAT_ROLES, type ChatMessage } from "../tokenizer/chat-template.ts";
import { checkChatRequest } from "./chat-request-check.ts";
import { OpenAIError } from "./openai-error.ts";
import type { FunctionTool } from "./tool-calls/tool-call-format.ts";

/** `tool_choice`: content only, the model's choice, some call, or a call of this function. */
export type ToolChoice = "none" | "auto" | "required" | { name: string };

/** `response_format`: free text, any JSON object, or JSON matching a schema. */
export type ResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | { type: "json_schema"; name: string; schema: Record<string, unknown> };

/** A validated `POST /v1/chat/completions` body, as the engine needs it. */
export interface ChatCompletionRequest {
  /** The model id the client asked for (must be the served one). */
  model: string;
  /** Answer with server-sent events, one chunk per token. */
  stream: boolean;
  /** Send a final chunk with token usage (`stream_options.include_usage`). */
  includeUsage: boolean;
  /** Return per-token log-probabilities in each choice. */
  logprobs: boolean;
  /** The functions offered (`tools`), in the order given. */
  tools: FunctionTool[];
  /** `tool_choice`; `auto` when tools are offered and none is named, else `none`. */
  toolChoice: ToolChoice;
  /** `parallel_tool_calls` (default true): false allows one call per answer. */
  parallelToolCalls: boolean;
  /** `response_format`. */
  responseFormat: ResponseFormat;
  /** The request as the engine takes it. */
  generation: GenRequest;
}

/** A 400 naming the param at fault. */
export const invalid = (param: string, message: string) =>
  new OpenAIError(400, `${param}: ${message}`, { param });

export function optionalNumber(
  body: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
    throw invalid(key, `expected a number in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

export function optionalBoolean(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalid(key, `expected true or false, got ${JSON.stringify(v)}`);
  return v;
}

export function optionalInteger(
  body: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
): number | undefined {
  const v = optionalNumber(body, key, min, max);
  if (v !== undefined && !Number.isInteger(v)) throw invalid(key, `expected an integer, got ${v}`);
  return v;
}

function messageContent(content: unknown, i: number): string | null {
  if (content === null || content === undefined || typeof content === "string") return content ?? null;
  if (Array.isArray(content)) {
    return content
      .map((part, j) => {
        if (part?.type !== "text" || typeof part.text !== "string") {
          throw invalid(
            `messages[${i}].content[${j}]`,
            `expected a text part, got ${JSON.stringify(part?.type ?? part)}`,
          );
        }
        return part.text as string;
      })
      .join("");
  }
  throw invalid(
    `messages[${i}].content`,
    `expected a string, an array of text parts or null, got ${typeof content}`,
  );
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** OpenAI's rule for function names. */
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function parseToolCalls(value: unknown, at: string): ChatToolCall[] {
  if (!Array.isArray(value)) throw invalid(at, `expected an array of tool calls, got ${typeof value}`);
  return value.map((call, j) => {
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || !isRecord(fn) || typeof fn.name !== "string" || typeof fn.arguments !== "string") {
      throw invalid(
        `${at}[${j}]`,
        'expected {"id", "type": "function", "function": {"name", "arguments": string}}',
      );
    }
    if (!FUNCTION_NAME.test(fn.name))
      throw invalid(
        `${at}[${j}].function.name`,
        `expected [a-zA-Z0-9_-]{1,64}, got ${JSON.stringify(fn.name)}`,
      );
    return {
      ...(typeof call.id === "string" ? { id: call.id } : {}),
      type: "function" as const,
      function: { name: fn.name, arguments: fn.arguments },
    };
  });
}

function parseMessage(m: unknown, i: number): ChatMessage {
  const msg = isRecord(m) ? m : {};
  const role = msg.role === "developer" ? "system" : msg.role;
  if (typeof role !== "string" || !(CHAT_ROLES as readonly string[]).includes(role)) {
    throw invalid(
      `messages[${i}].role`,
      `expected one of system, developer, user, assistant, tool, got ${JSON.stringify(msg.role)}`,
    );
  }
  const message: ChatMessage = { role, content: messageContent(msg.content, i) };
  if (role === "assistant" && msg.tool_calls !== undefined && msg.tool_calls !== null)
    message.tool_calls = parseToolCalls(msg.tool_calls, `messages[${i}].tool_calls`);
  if (role === "tool") {
    if (typeof msg.tool_call_id !== "string")
      throw invalid(`messages[${i}].tool_call_id`, "a tool message needs the id of the call it answers");
    message.tool_call_id = msg.tool_call_id;
  }
  if (typeof msg.name === "string") message.name = msg.name;
  return message;
}

function parseTools(value: unknown, budget: GrammarSizeBudget): FunctionTool[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid("tools", `expected an array of tools, got ${typeof value}`);
  if (value.length > 128) throw invalid("tools", `expected at most 128 tools, got ${value.length}`);
  const names = new Set<string>();
  return value.map((tool, i) => {
    const fn = isRecord(tool) ? tool.function : undefined;
    if (!isRecord(tool) || tool.type !== "function" || !isRecord(fn))
      throw invalid(`tools[${i}]`, 'expected {"type": "function", "function": {"name", "parameters"}}');
    if (typeof fn.name !== "string" || !FUNCTION_NAME.test(fn.name))
      throw invalid(
        `tools[${i}].function.name`,
        `expected [a-zA-Z0-9_-]{1,64}, got ${JSON.stringify(fn.name)}`,
      );
    if (names.has(fn.name)) throw invalid(`tools[${i}].function.name`, `${fn.name} is offered twice`);
    names.add(fn.name);
    const parameters = fn.parameters ?? { type: "object", properties: {} };
    try {
      checkGrammarSchema(parameters, `tools[${i}].function.parameters`, budget);
    } catch (error) {
      throw new OpenAIError(400, (error as Error).message, { param: `tools[${i}].function.parameters` });
    }
    return { name: fn.name, parameters: parameters as Record<string, unknown> };
  });
}

function parseToolChoice(value: unknown, tools: FunctionTool[]): ToolChoice {
  if (value === undefined || value === null) return tools.length > 0 ? "auto" : "none";
  if (value === "none") return "none";
  if (value === "auto" || value === "required") {
    if (tools.length === 0)
      throw invalid("tool_choice", `${JSON.stringify(value)} needs tools to choose from`);
    return value;
  }
  const fn = isRecord(value) ? value.function : undefined;
  if (!isRecord(value) || value.type !== "function" || !isRecord(fn) || typeof fn.name !== "string") {
    throw invalid(
      "tool_choice",
      `expected "none", "auto", "required" or {"type": "function", "function": {"name"}}, got ${JSON.stringify(value)}`,
    );
  }
  if (!tools.some((t) => t.name === fn.name))
    throw invalid("tool_choice", `function ${JSON.stringify(fn.name)} is not among the tools offered`);
  return { name: fn.name };
}

function parseResponseFormat(value: unknown, budget: GrammarSizeBudget): ResponseFormat {
  if (value === undefined || value === null) return { type: "text" };
  if (!isRecord(value)) throw invalid("response_format", `expected an object, got ${typeof value}`);
  if (value.type === "text" || value.type === "json_object") return { type: value.type };
  if (value.type !== "json_schema") {
    throw invalid(
      "response_format.type",
      `expected "text", "json_object" or "json_schema", got ${JSON.stringify(value.type)}`,
    );
  }
  const spec = value.json_schema;
  if (!isRecord(spec) || typeof spec.name !== "string")
    throw invalid("response_format.json_schema", 'expected {"name", "schema", "strict"?}');
  const schema = spec.schema ?? {};
  try {
    checkGrammarSchema(schema, "response_format.json_schema.schema", budget);
  } catch (error) {
    throw new OpenAIError(400, (error as Error).message, { param: "response_format.json_schema.schema" });
  }
  return { type: "json_schema", name: spec.name, schema: schema as Record<string, unknown> };
}

/**
 * Parameters OpenAI documents that this engine cannot honour, with what to send instead: refused with OpenAI's
 * 400 `unsupported_parameter` rather than ignored. The others it does not act on (`user`, `safety_identifier`,
 * `store`, `metadata`, `service_tier`, `prediction`, the `prompt_cache_*` fields) change nothing in what the model
 * writes, so they are accepted and ignored.
 */
const UNSUPPORTED: Record<string, string> = {
  functions: "offer them as tools",
  function_call: "use tool_choice",
  audio: "this server writes text only",
  reasoning_effort: "the model does not reason in separate tokens",
  verbosity: "the model has no verbosity setting",
  web_search_options: "this server has no web search",
  moderation: "this server runs no moderation",
};

/** OpenAI's answer to a parameter this model's server does not support. */
export function unsupported(param: string, hint: string): OpenAIError {
  return new OpenAIError(400, `Unsupported parameter: '${param}' is not supported by this server: ${hint}.`, {
    param,
    code: "unsupported_parameter",
  });
}

/** Refuses what the engine cannot honour: a parameter of `UNSUPPORTED`, an output modality other than text. */
function refuseUnsupported(b: Record<string, unknown>): void {
  for (const [param, hint] of Object.entries(UNSUPPORTED)) {
    if (b[param] !== undefined && b[param] !== null) throw unsupported(param, hint);
  }
  const modalities = b.modalities as string[] | null | undefined;
  const other = modalities?.find((m) => m !== "text");
  if (other !== undefined) {
    throw new OpenAIError(
      400,
      `Unsupported value: 'modalities' does not support ${JSON.stringify(other)} on this server; only "text" is supported.`,
      { param: "modalities", code: "unsupported_value" },
    );
  }
}

/**
 * Validates an OpenAI chat completion body and maps it onto a GenRequest (the grammar is the server's to add): first
 * the rules every OpenAI-compatible route of Arc shares (`checkChatRequest`), then what this engine can run.
 */
export function parseChatRequest(body: unknown, defaultMaxTokens: number): ChatCompletionRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OpenAIError(
      400,
      `expected a JSON object body, got ${Array.isArray(body) ? "an array" : typeof body}`,
    );
  }
  const b = body as Record<string, unknown> & { model: string; messages: unknown[] };
  const problem = checkChatRequest(b);
  if (problem)
    throw new OpenAIError(400, problem.message, {
      param: problem.param ?? undefined,
      code: problem.code ?? undefined,
    });
  refuseUnsupported(b);
  const messages: ChatMessage[] = b.messages.map((m: unknown, i: number) => parseMessage(m, i));
  // the tools and response_format of one request share one bound on the grammar they compile to
  const grammarBudget = new GrammarSizeBudget();
  const tools = parseTools(b.tools, grammarBudget);
  const toolChoice = parseToolChoice(b.tool_choice, tools);
  // its shape was checked by checkChatRequest: a string or up to 4 strings
  const stop =
    typeof b.stop === "string" ? [b.stop] : Array.isArray(b.stop) ? (b.stop as string[]) : undefined;
  const logprobs = b.logprobs === true;
  const topLogprobs = optionalInteger(b, "top_logprobs", 0, 20);
  if (topLogprobs && !logprobs) throw invalid("top_logprobs", "requires logprobs: true");
  const maxTokens =
    optionalInteger(b, "max_completion_tokens", 1, 1_000_000) ??
    optionalInteger(b, "max_tokens", 1, 1_000_000);
  const streamOptions = b.stream_options as { include_usage?: unknown } | undefined;
  return {
    model: b.model,
    stream: b.stream === true,
    includeUsage: streamOptions?.include_usage === true,
    logprobs,
    tools,
    toolChoice,
    parallelToolCalls: optionalBoolean(b, "parallel_tool_calls") ?? true,
    responseFormat: parseResponseFormat(b.response_format, grammarBudget),
    generation: {
      messages,
      // the model sees the tools offered even under `none`, as OpenAI's and vLLM's do; it just may not call them
      ...(tools.length > 0 ? { tools: b.tools as object[] } : {}),
      n: optionalInteger(b, "n", 1, 64) ?? 1,
      maxTokens: maxTokens ?? defaultMaxTokens,
      temperature: optionalNumber(b, "temperature", 0, 2) ?? 1,
      topP: optionalNumber(b, "top_p", Number.MIN_VALUE, 1) ?? 1,
      topK: optionalInteger(b, "top_k", 0, 1_000_000) ?? 0,
      stop,
      seed: optionalInteger(b, "seed", -(2 ** 53), 2 ** 53),
      topLogprobs: logprobs ? Math.max(topLogprobs ?? 0, 0) : 0,
      ...penalties(b),
      ...cacheSalt(b),
    },
  };
}

/**
 * vLLM's `cache_salt`: the prompt reuses cached prefixes only of prompts sent with the same salt (absent when not
 * given). An empty or non-string salt is refused, as vLLM refuses it.
 */
export function cacheSalt(b: Record<string, unknown>): Pick<GenRequest, "cacheSalt"> {
  const salt = b.cache_salt;
  if (salt === undefined || salt === null) return {};
  if (typeof salt !== "string" || salt === "")
    throw invalid("cache_salt", `expected a non-empty string, got ${JSON.stringify(salt)}`);
  return { cacheSalt: salt };
}

/** `logit_bias`, `frequency_penalty` and `presence_penalty` as the engine takes them (absent when not asked for). */
export function penalties(
  b: Record<string, unknown>,
): Pick<GenRequest, "logitBias" | "frequencyPenalty" | "presencePenalty"> {
  const bias = b.logit_bias;
  if (bias !== undefined && bias !== null && !isRecord(bias))
    throw invalid("logit_bias", `expected an object of token ids to numbers, got ${JSON.stringify(bias)}`);
  const frequency = optionalNumber(b, "frequency_penalty", -2, 2);
  const presence = optionalNumber(b, "presence_penalty", -2, 2);
  return {
    ...(bias && Object.keys(bias).length > 0 ? { logitBias: bias as Record<number, number> } : {}),
    ...(frequency ? { frequencyPenalty: frequency } : {}),
    ...(presence ? { presencePenalty: presence } : {}),
  };
}
