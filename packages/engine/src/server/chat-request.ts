import type { GenRequest } from "@arc/core";
import { CHAT_ROLES, type ChatMessage } from "../tokenizer/chat-template.ts";
import { OpenAIError } from "./openai-error.ts";

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
  /** The request as the engine takes it. */
  generation: GenRequest;
}

const invalid = (param: string, message: string) => new OpenAIError(400, `${param}: ${message}`, { param });

function optionalNumber(
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

function optionalInteger(
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

/**
 * Validates an OpenAI chat completion body and maps it onto a GenRequest. Unknown fields (tools,
 * response_format, ...) are ignored: the embedded model has no tool-call grammar.
 */
export function parseChatRequest(body: unknown, defaultMaxTokens: number): ChatCompletionRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OpenAIError(
      400,
      `expected a JSON object body, got ${Array.isArray(body) ? "an array" : typeof body}`,
    );
  }
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || b.model.length === 0)
    throw invalid("model", `expected a model id string, got ${JSON.stringify(b.model)}`);
  if (!Array.isArray(b.messages) || b.messages.length === 0) {
    throw invalid("messages", `expected a non-empty array of messages, got ${JSON.stringify(b.messages)}`);
  }
  const messages: ChatMessage[] = b.messages.map((m: unknown, i: number) => {
    const msg = m as { role?: unknown; content?: unknown };
    const role = msg?.role === "developer" ? "system" : msg?.role;
    if (typeof role !== "string" || !(CHAT_ROLES as readonly string[]).includes(role)) {
      throw invalid(
        `messages[${i}].role`,
        `expected one of system, developer, user, assistant, tool, got ${JSON.stringify(msg?.role)}`,
      );
    }
    return { role, content: messageContent(msg.content, i) };
  });
  let stop: string[] | undefined;
  if (typeof b.stop === "string") stop = [b.stop];
  else if (Array.isArray(b.stop)) {
    if (b.stop.length > 4 || b.stop.some((s) => typeof s !== "string")) {
      throw invalid("stop", `expected a string or up to 4 strings, got ${JSON.stringify(b.stop)}`);
    }
    stop = b.stop as string[];
  } else if (b.stop !== undefined && b.stop !== null)
    throw invalid("stop", `expected a string or an array of strings, got ${typeof b.stop}`);
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
    generation: {
      messages,
      n: optionalInteger(b, "n", 1, 64) ?? 1,
      maxTokens: maxTokens ?? defaultMaxTokens,
      temperature: optionalNumber(b, "temperature", 0, 2) ?? 1,
      topP: optionalNumber(b, "top_p", Number.MIN_VALUE, 1) ?? 1,
      topK: optionalInteger(b, "top_k", 0, 1_000_000) ?? 0,
      stop,
      seed: optionalInteger(b, "seed", -(2 ** 53), 2 ** 53),
      topLogprobs: logprobs ? Math.max(topLogprobs ?? 0, 0) : 0,
    },
  };
}
