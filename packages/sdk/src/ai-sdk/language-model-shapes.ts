/**
 * The parts of the Vercel AI SDK's language-model specification (`LanguageModelV4` of `@ai-sdk/provider`; `V3` reads
 * the same) the SDK reads, typed structurally so that the SDK never imports `ai`.
 */

/** A file in a prompt: bytes (or base64), a URL, or text. */
export interface FileDataLike {
  type?: string;
  data?: Uint8Array | string;
  url?: URL | string;
  text?: string;
}

/** A content part of a prompt message. */
export interface PromptPartLike {
  type: string;
  text?: string;
  mediaType?: string;
  filename?: string;
  data?: FileDataLike | Uint8Array | string | URL;
  toolCallId?: string;
  toolName?: string;
  input?: unknown;
  output?: { type?: string; value?: unknown; reason?: string };
}

/** One message of a prompt: a system message's content is a string, the others' a list of parts. */
export interface PromptMessageLike {
  role: "system" | "user" | "assistant" | "tool";
  content: string | PromptPartLike[];
}

/** A function tool offered to the model. */
export interface FunctionToolLike {
  type: string;
  name: string;
  description?: string;
  inputSchema?: unknown;
}

/** The call options of `doGenerate` / `doStream`. */
export interface CallOptionsLike {
  prompt?: PromptMessageLike[];
  tools?: FunctionToolLike[];
  toolChoice?: { type: string; toolName?: string };
  responseFormat?: { type: string; schema?: unknown; name?: string; description?: string };
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  [option: string]: unknown;
}

/** Token counts: V4's `{total, ...}` objects, or V2/V3's plain numbers. */
export interface UsageLike {
  inputTokens?: number | { total?: number };
  outputTokens?: number | { total?: number };
}

/** An output content part: text, a tool call (`input` is the arguments' JSON text), reasoning, ... */
export interface ContentLike {
  type: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: string;
}

/** What `doGenerate` returns (and what a stream is assembled into). */
export interface GenerateResultLike {
  content?: ContentLike[];
  finishReason?: string | { unified?: string; raw?: string };
  usage?: UsageLike;
  response?: { id?: string; modelId?: string };
}

/** One part of the stream `doStream` returns. */
export interface StreamPartLike {
  type: string;
  id?: string;
  delta?: string;
  text?: string;
  toolCallId?: string;
  toolName?: string;
  input?: string;
  finishReason?: GenerateResultLike["finishReason"];
  usage?: UsageLike;
  modelId?: string;
  error?: unknown;
}

/** The model the middleware wraps. */
export interface LanguageModelLike {
  provider?: string;
  modelId?: string;
}
