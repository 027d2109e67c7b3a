/**
 * The parts of the OpenAI Chat Completions shapes the SDK reads, typed structurally so that the SDK never
 * imports `openai` (the user's own client instance, of any recent version, is what gets wrapped).
 */

/** A client with `chat.completions.create`: the official `openai` client or anything shaped like it. */
export interface OpenAILike {
  chat: { completions: { create(...args: never[]): unknown } };
}

/** The request body of `chat.completions.create`. */
export interface ChatRequestLike {
  model?: string;
  messages?: unknown[];
  tools?: unknown[];
  stream?: boolean | null;
  [param: string]: unknown;
}

/** A tool call as it appears in a response message. */
export interface ToolCallLike {
  id?: string;
  type?: string;
  function?: { name?: string; arguments?: string };
}

/** Token counts as the API reports them. */
export interface UsageLike {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: unknown;
  completion_tokens_details?: unknown;
}

/** A non-streamed `ChatCompletion`. */
export interface ChatCompletionLike {
  id?: string;
  model?: string;
  system_fingerprint?: string | null;
  choices?: {
    index?: number;
    finish_reason?: string | null;
    message?: { content?: string | null; refusal?: string | null; tool_calls?: ToolCallLike[] | null };
  }[];
  usage?: UsageLike | null;
  _request_id?: string | null;
}

/** One `ChatCompletionChunk` of a stream. */
export interface ChatCompletionChunkLike {
  id?: string;
  model?: string;
  system_fingerprint?: string | null;
  choices?: {
    index?: number;
    finish_reason?: string | null;
    delta?: {
      content?: string | null;
      refusal?: string | null;
      tool_calls?: {
        index?: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }[];
    };
  }[];
  usage?: UsageLike | null;
}
