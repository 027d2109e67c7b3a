import { z } from "zod";

/** An id chosen by the sender (uuid, ulid, OTel span id...). Re-sending the same id never duplicates. */
export const RecordId = z
  .string()
  .min(1, "must not be empty")
  .max(128, "must be at most 128 characters")
  .regex(/^[A-Za-z0-9._:-]+$/, "may contain only letters, digits and . _ : -");

/** UTC offsets in use run from -12:00 to +14:00; PostgreSQL refuses offsets past ±15:59. */
const MAX_OFFSET_MINUTES = 14 * 60;

/** The ISO 8601 form the timestamp check takes; the storability check speaks only of values in that form. */
const isoDateTime = z.datetimeRegex({ offset: true, local: false, precision: null });

/** The first and last instants a timestamp may be: reading them back gives a four-digit year in UTC too. */
const EARLIEST_MS = Date.parse("0001-01-01T00:00:00Z");
const LATEST_MS = Date.parse("9999-12-31T23:59:59.999Z");

/**
 * True for a date-time both stores keep and read back as a date-time this check takes again: years 0001-9999 as
 * written and in UTC (`0001-01-01T00:00:00+01:00` is a BC instant), and an offset no larger than ±14:00.
 */
function storableDateTime(value: string): boolean {
  if (!isoDateTime.test(value)) return true;
  const year = Number(value.slice(0, 4));
  if (!(year >= 1 && year <= 9999)) return false;
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(value);
  if (offset && Number(offset[2]) * 60 + Number(offset[3]) > MAX_OFFSET_MINUTES) return false;
  const instant = Date.parse(value);
  return instant >= EARLIEST_MS && instant <= LATEST_MS;
}

/** An ISO 8601 date-time with its offset, in the years 0001-9999 (UTC too), as ingest and query filters take it. */
export const Timestamp = z
  .string()
  .datetime({ offset: true, message: "must be an ISO 8601 date-time, e.g. 2026-01-31T12:00:00Z" })
  .refine(
    storableDateTime,
    "must be a date-time in the years 0001-9999 (in UTC as well) with a UTC offset within ±14:00",
  );

/** The largest count PostgreSQL's `integer` columns hold. */
const MAX_INT32 = 2_147_483_647;

/** A token count: a non-negative integer that fits a 32-bit column. */
const TokenCount = z.number().int().nonnegative().max(MAX_INT32, `must be at most ${MAX_INT32}`);

/**
 * One chat message exactly as the OpenAI Chat Completions API takes it (snake_case fields such as
 * `tool_calls`, `tool_call_id`, content parts `{type:"text"}` / `{type:"image_url"}`). Kept verbatim:
 * it is what gateways forward and what fine-tune exports need.
 */
export const ChatMessage = z
  .object({
    role: z.enum(["system", "developer", "user", "assistant", "tool", "function"]),
    content: z
      .union([
        z.string(),
        z.null(),
        z.array(
          z
            .object({ type: z.string() })
            .passthrough()
            .describe("a content part: {type:'text',text} or {type:'image_url',image_url:{url}}"),
        ),
      ])
      .optional(),
  })
  .passthrough();
export type ChatMessage = z.infer<typeof ChatMessage>;

/** A tool call the model made: OpenAI's `{id, type:"function", function:{name, arguments}}`. */
export const ToolCall = z
  .object({
    id: z.string().optional(),
    type: z.string().default("function"),
    function: z.object({ name: z.string(), arguments: z.string() }),
  })
  .passthrough();
export type ToolCall = z.infer<typeof ToolCall>;

/** Token counts of one LLM call. */
export const Usage = z.object({
  promptTokens: TokenCount.optional(),
  completionTokens: TokenCount.optional(),
  totalTokens: TokenCount.optional(),
});
export type Usage = z.infer<typeof Usage>;

/** What went wrong in a step: the error the caller saw. */
export const StepError = z.object({
  message: z.string(),
  type: z.string().optional(),
  code: z.union([z.string(), z.number().finite()]).optional(),
  status: z.number().int().optional(),
});
export type StepError = z.infer<typeof StepError>;

/** The LLM-specific part of a step of kind `llm`. */
export const LlmCall = z.object({
  /** The model the caller asked for. */
  modelRequested: z.string().optional(),
  /** The model that answered (the response's `model`). */
  modelServed: z.string().optional(),
  /** The version of the model that answered, e.g. an Arc ModelVersion id or a provider fingerprint. */
  modelVersion: z.string().optional(),
  messages: z.array(ChatMessage).default([]),
  /** Tools offered, in OpenAI's `{type:"function", function:{name, description, parameters}}` form. */
  tools: z.array(z.object({}).passthrough()).optional(),
  /** Sampling parameters as sent (temperature, top_p, max_tokens, seed, stop, n, ...). */
  params: z.record(z.unknown()).optional(),
  output: z
    .object({
      content: z.string().nullable().optional(),
      toolCalls: z.array(ToolCall).optional(),
    })
    .optional(),
  finishReason: z.string().optional(),
  usage: Usage.optional(),
});
export type LlmCall = z.infer<typeof LlmCall>;

/** What a step was: a model call, a tool call, a retrieval, or anything else the agent wants on record. */
export const StepKind = z.enum(["llm", "tool", "retrieval", "custom"]);
export type StepKind = z.infer<typeof StepKind>;

/** One step of an agent episode. */
export const Step = z.object({
  id: RecordId,
  kind: StepKind,
  name: z.string().max(512).optional(),
  /** The step this one ran inside, if any (e.g. an LLM call inside a tool). */
  parentId: RecordId.optional(),
  startedAt: Timestamp,
  endedAt: Timestamp.optional(),
  latencyMs: z.number().nonnegative().finite().optional(),
  llm: LlmCall.optional(),
  /** Input of a non-LLM step (tool arguments, retrieval query...). */
  input: z.unknown().optional(),
  /** Output of a non-LLM step (tool result, retrieved documents...). */
  output: z.unknown().optional(),
  error: StepError.optional(),
  metadata: z.record(z.unknown()).optional(),
});
export type Step = z.infer<typeof Step>;

/** One agent episode: the unit failures are judged on. */
export const Trace = z.object({
  id: RecordId,
  name: z.string().max(512).optional(),
  startedAt: Timestamp,
  endedAt: Timestamp.optional(),
  /** Who the episode served; canary routing and feedback key on it. */
  userId: z.string().max(256).optional(),
  /** Groups the episodes of one conversation. */
  sessionId: z.string().max(256).optional(),
  /** The task environment this episode belongs to (its task family's env id), which selects its verifier. */
  env: z.string().max(128).optional(),
  status: z.enum(["ok", "error", "unknown"]).default("unknown"),
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  tags: z.array(z.string().max(128)).max(64).optional(),
  metadata: z.record(z.unknown()).optional(),
  steps: z.array(Step).default([]),
});
export type Trace = z.infer<typeof Trace>;
/** A trace as a sender may write it, before defaults are filled in. */
export type TraceInput = z.input<typeof Trace>;

/** The body of `POST /v1/traces`. */
export const TraceBatch = z.object({
  traces: z.array(Trace).min(1, "must hold at least one trace").max(10_000),
});
export type TraceBatch = z.infer<typeof TraceBatch>;

/** A person's (or a program's) judgement of a trace or one of its steps. */
export const Feedback = z
  .object({
    id: RecordId,
    traceId: RecordId,
    stepId: RecordId.optional(),
    /** A number the tenant defines, e.g. 0..1 or -1/+1. */
    score: z.number().finite().optional(),
    /** A short label, e.g. `wrong_tool` or `thumbs_down`. */
    label: z.string().max(256).optional(),
    /** What the output should have been; becomes a `chosen` response in preference data. */
    correction: z.string().max(100_000).optional(),
    comment: z.string().max(10_000).optional(),
    createdAt: Timestamp.optional(),
  })
  .refine((f) => f.score !== undefined || f.label !== undefined || f.correction !== undefined, {
    message: "feedback needs at least one of score, label or correction",
  });
export type Feedback = z.infer<typeof Feedback>;
