/**
 * The wire format the SDK sends, mirroring `packages/core/src/trace/schema.ts` (the contract of
 * `POST /v1/traces` and `POST /v1/feedback`). Plain types: the SDK imports nothing of ours and no zod.
 */

/** One chat message exactly as the OpenAI Chat Completions API takes it (kept verbatim). */
export type WireChatMessage = { role: string; content?: unknown } & Record<string, unknown>;

/** A tool call the model made: OpenAI's `{id, type:"function", function:{name, arguments}}`. */
export interface WireToolCall {
  /** The provider's call id; a later `tool` message answers it by `tool_call_id`. */
  id?: string;
  /** Always `function` today; kept as a string so new kinds pass through. */
  type: string;
  /** The function called and its arguments as the model wrote them (a JSON string, possibly invalid). */
  function: { name: string; arguments: string };
  /** Provider-specific fields, kept verbatim. */
  [key: string]: unknown;
}

/** Token counts of one LLM call. */
export interface WireUsage {
  /** Tokens of the prompt, as the provider counted them. */
  promptTokens?: number;
  /** Tokens the model generated. */
  completionTokens?: number;
  /** Prompt plus completion, when the provider reports it. */
  totalTokens?: number;
}

/** What went wrong in a step: the error the caller saw. */
export interface WireStepError {
  /** The error's message as the caller saw it. */
  message: string;
  /** The error's class or provider type (e.g. `APIConnectionError`, `rate_limit_error`): what detectors group on. */
  type?: string;
  /** The provider's error code, when it gave one. */
  code?: string | number;
  /** HTTP status of a failed API call. */
  status?: number;
}

/** The LLM-specific part of a step of kind `llm`. */
export interface WireLlmCall {
  /** The model the caller asked for. */
  modelRequested?: string;
  /** The model that answered (the response's `model`). */
  modelServed?: string;
  /** The provider's fingerprint of the serving model (`system_fingerprint`). */
  modelVersion?: string;
  /** The conversation sent, verbatim (what fine-tune exports replay). */
  messages: WireChatMessage[];
  /** Tools offered, as sent. */
  tools?: Record<string, unknown>[];
  /** Every request field other than model, messages and tools (temperature, top_p, stream...). */
  params?: Record<string, unknown>;
  /** The assistant's reply: its text and the tool calls it made. */
  output?: { content?: string | null; toolCalls?: WireToolCall[] };
  /** The provider's finish reason (`stop`, `length`, `tool_calls`...); `length` is how truncation is detected. */
  finishReason?: string;
  /** Token counts, when the provider reported them. */
  usage?: WireUsage;
}

/** Kinds of step the contract knows. */
export type WireStepKind = "llm" | "tool" | "retrieval" | "custom";

/** One step of an agent episode. */
export interface WireStep {
  /** Unique within its trace; a step re-sent with the same id is ignored (the stored one stays), so retries are safe. */
  id: string;
  /** What the step was; `llm` steps carry `llm`. */
  kind: WireStepKind;
  /** A label for people, e.g. the tool's or the function's name. */
  name?: string;
  /** The step this one ran inside (a nested `trace`). */
  parentId?: string;
  /** ISO 8601 date-time with offset. */
  startedAt: string;
  /** ISO 8601 date-time with offset; absent while the step still runs. */
  endedAt?: string;
  /** Wall-clock duration as the SDK measured it (more precise than the two timestamps). */
  latencyMs?: number;
  /** The model call, for steps of kind `llm`. */
  llm?: WireLlmCall;
  /** Input of a non-LLM step (tool arguments, retrieval query...). */
  input?: unknown;
  /** Output of a non-LLM step (tool result, retrieved documents...). */
  output?: unknown;
  /** Set when the step failed. */
  error?: WireStepError;
  /** Free-form key/values, e.g. the gateway's step ids. */
  metadata?: Record<string, unknown>;
}

/** One agent episode. */
export interface WireTrace {
  /** Chosen by the SDK; a trace re-sent with the same id is merged into the stored one (new steps added), never duplicated. */
  id: string;
  /** The `arc.trace` name, e.g. `answer-ticket`. */
  name?: string;
  /** ISO 8601 date-time with offset. */
  startedAt: string;
  /** ISO 8601 date-time with offset; absent while the episode still runs. */
  endedAt?: string;
  /** Who the episode served; canary routing and feedback key on it. */
  userId?: string;
  /** Groups the episodes of one conversation. */
  sessionId?: string;
  /** The task environment (a task family's env id), which selects the verifier that judges the episode. */
  env?: string;
  /** How the traced function ended: `error` when it threw. */
  status?: "ok" | "error" | "unknown";
  /** The traced function's input, as the caller gave it. */
  input?: unknown;
  /** The traced function's return value. */
  output?: unknown;
  /** Labels to filter on. */
  tags?: string[];
  /** Free-form key/values (e.g. `solution`, the reference answer verifiers check against). */
  metadata?: Record<string, unknown>;
  /** The episode's steps, in the order they started. */
  steps: WireStep[];
}

/** A person's (or a program's) judgement of a trace or one of its steps; the body of `POST /v1/feedback`. */
export interface WireFeedback {
  /** Chosen by the sender; re-sending the same id never duplicates. */
  id: string;
  /** The trace judged. */
  traceId: string;
  /** The step judged, when the feedback is about one step. */
  stepId?: string;
  /** A number the tenant defines, e.g. 0..1 or -1/+1. */
  score?: number;
  /** A short label, e.g. `wrong_tool` or `thumbs_down`. */
  label?: string;
  /** What the output should have been; becomes a `chosen` response in preference data. */
  correction?: string;
  /** Free text for people. */
  comment?: string;
  /** ISO 8601 date-time; the server's clock when absent. */
  createdAt?: string;
}
