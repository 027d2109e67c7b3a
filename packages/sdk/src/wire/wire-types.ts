/**
 * The wire format the SDK sends, mirroring `packages/core/src/trace/schema.ts` (the contract of
 * `POST /v1/traces` and `POST /v1/feedback`). Plain types: the SDK imports nothing of ours and no zod.
 */

/** One chat message exactly as the OpenAI Chat Completions API takes it (kept verbatim). */
export type WireChatMessage = { role: string; content?: unknown } & Record<string, unknown>;

/** A tool call the model made: OpenAI's `{id, type:"function", function:{name, arguments}}`. */
export interface WireToolCall {
  id?: string;
  type: string;
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

/** Token counts of one LLM call. */
export interface WireUsage {
  promptTokens?: number;
  completionTokens?: number;
  totalTokens?: number;
}

/** What went wrong in a step: the error the caller saw. */
export interface WireStepError {
  message: string;
  type?: string;
  code?: string | number;
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
  messages: WireChatMessage[];
  /** Tools offered, as sent. */
  tools?: Record<string, unknown>[];
  /** Every request field other than model, messages and tools (temperature, top_p, stream...). */
  params?: Record<string, unknown>;
  output?: { content?: string | null; toolCalls?: WireToolCall[] };
  finishReason?: string;
  usage?: WireUsage;
}

/** Kinds of step the contract knows. */
export type WireStepKind = "llm" | "tool" | "retrieval" | "custom";

/** One step of an agent episode. */
export interface WireStep {
  id: string;
  kind: WireStepKind;
  name?: string;
  /** The step this one ran inside (a nested `trace`). */
  parentId?: string;
  startedAt: string;
  endedAt?: string;
  latencyMs?: number;
  llm?: WireLlmCall;
  input?: unknown;
  output?: unknown;
  error?: WireStepError;
  metadata?: Record<string, unknown>;
}

/** One agent episode. */
export interface WireTrace {
  id: string;
  name?: string;
  startedAt: string;
  endedAt?: string;
  userId?: string;
  sessionId?: string;
  env?: string;
  status?: "ok" | "error" | "unknown";
  input?: unknown;
  output?: unknown;
  tags?: string[];
  metadata?: Record<string, unknown>;
  steps: WireStep[];
}

/** A person's (or a program's) judgement of a trace or one of its steps; the body of `POST /v1/feedback`. */
export interface WireFeedback {
  id: string;
  traceId: string;
  stepId?: string;
  score?: number;
  label?: string;
  correction?: string;
  comment?: string;
  createdAt?: string;
}
