/** One chat message of the teaching protocol (plain text; the protocol needs no tools or images). */
export interface TeachMessage {
  /** Who speaks: the protocol sends system and user messages. */
  role: "system" | "user" | "assistant";
  /** The message text. */
  content: string;
}

/** Sampling options of one completion. */
export interface CompleteOptions {
  /** Upper bound on generated tokens; the probe's is maxProbeTokens. */
  maxTokens: number;
  /** 0 means greedy. */
  temperature: number;
  /** Aborting it cancels the call; the protocol passes the caller's signal through. */
  signal?: AbortSignal;
  /** Ask for per-token log-probabilities, with this many alternatives each (OpenAI `logprobs`, `top_logprobs`). */
  logprobs?: { top: number };
}

/** What one completion returned. */
export interface ChatCompletion {
  /** The generated text, without the prompt. */
  text: string;
  /** Tokens of the rendered prompt, as the backend counted them. */
  promptTokens: number;
  /** Tokens generated, as the backend counted them. */
  completionTokens: number;
  /** `length` when maxTokens cut the output. */
  finishReason?: "stop" | "length" | "abort";
  /** OpenAI `choices[0].logprobs` as the backend returned it, when they were asked for. */
  logprobs?: unknown;
}

/**
 * The least the protocol needs from a model: one chat completion. The server adapts embedded
 * engines and OpenAI-compatible endpoints to it, so core stays free of I/O.
 */
export interface ChatModel {
  /** The model's name, recorded on trace steps. */
  readonly model?: string;
  /** Completes the chat; rejects when `signal` aborts. */
  complete(messages: TeachMessage[], options: CompleteOptions): Promise<ChatCompletion>;
}
