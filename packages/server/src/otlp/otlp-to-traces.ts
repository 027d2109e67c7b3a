import { createHash } from "node:crypto";
import { setImmediate as nextTurn } from "node:timers/promises";
import {
  compileJsonReader,
  InvalidInputError,
  notAccepted,
  Step,
  type StepKind,
  type Trace,
  type TraceInput,
  Trace as TraceSchema,
} from "@arc/core";
import { outputOf, parseJsonAttribute, toOpenAiMessages } from "./genai-messages.ts";
import {
  readOpenInference,
  readOpenLlmetry,
  readVercelAi,
  styledStepKind,
  styledToolCall,
} from "./genai-styles.ts";
import { arrayOf, attributeMap, type ExportTraceServiceRequest, type OtlpSpan } from "./otlp-json.ts";

/** The result of mapping one OTLP export: traces to store and spans that could not be used (with why). */
export interface OtlpMapping {
  /** Traces to store, one per OTLP trace id, spans as steps. */
  traces: Trace[];
  /** Spans left out (OTLP's `partialSuccess.rejectedSpans`). */
  rejectedSpans: number;
  /** Why each rejected span was left out, naming it. */
  errors: string[];
}

/** Spans mapped between two turns of the event loop, so a large export leaves other requests room to run. */
const SPANS_PER_TURN = 250;

/** Zod's Step and Trace without its issue bookkeeping; zod runs only to name what is wrong. */
const readStep = compileJsonReader(Step);
const readTrace = compileJsonReader(TraceSchema);

const llmOperations = new Set(["chat", "text_completion", "generate_content"]);
const retrievalOperations = new Set(["embeddings", "retrieval"]);
const spanStatusError = 2;

/** OTLP/JSON ids are hex; some exporters send base64. Returns lower-case hex or null. */
function hexId(id: string | undefined, bytes: number): string | null {
  if (!id) return null;
  if (new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`).test(id)) return id.toLowerCase();
  const decoded = Buffer.from(id, "base64");
  return decoded.length === bytes ? decoded.toString("hex") : null;
}

/** The latest time a span may carry: the end of year 9999, the last a stored timestamp holds. */
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** A fixed64 of nanoseconds since the epoch as an ISO date-time; undefined when unset, refused when malformed. */
function isoFromNanos(nanos: string | number | undefined, field: string): string | undefined {
  if (nanos === undefined || nanos === null || nanos === "" || nanos === 0 || nanos === "0") return undefined;
  const text = String(nanos);
  if (!/^\d{1,20}$/.test(text)) {
    throw new InvalidInputError(
      `${field}: expected nanoseconds since the epoch as a decimal string, got ${JSON.stringify(nanos)}`,
    );
  }
  const ms = Number(BigInt(text) / 1_000_000n);
  if (ms > LATEST_MS) throw new InvalidInputError(`${field}: ${text} lies past the year 9999`);
  return new Date(ms).toISOString();
}

/** Longest user or session id a trace keeps verbatim; longer ones (valid OTLP) become a stable digest. */
const MAX_IDENTIFIER_LENGTH = 256;

/** A user or session id as a trace stores it: verbatim up to 256 characters, else `sha256:<hex>` of it. */
function traceIdentifier(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text.length <= MAX_IDENTIFIER_LENGTH) return text;
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}

function stepKindOf(operation: unknown): StepKind {
  if (typeof operation !== "string") return "custom";
  if (llmOperations.has(operation)) return "llm";
  if (operation === "execute_tool") return "tool";
  if (retrievalOperations.has(operation)) return "retrieval";
  return "custom";
}

function take(attrs: Record<string, unknown>, key: string): unknown {
  const value = attrs[key];
  delete attrs[key];
  return value;
}

const paramAttributes: Record<string, string> = {
  "gen_ai.request.temperature": "temperature",
  "gen_ai.request.top_p": "top_p",
  "gen_ai.request.top_k": "top_k",
  "gen_ai.request.max_tokens": "max_tokens",
  "gen_ai.request.seed": "seed",
  "gen_ai.request.stop_sequences": "stop",
  "gen_ai.request.frequency_penalty": "frequency_penalty",
  "gen_ai.request.presence_penalty": "presence_penalty",
  "gen_ai.request.choice.count": "n",
};

function asNumber(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function llmOf(attrs: Record<string, unknown>) {
  const params: Record<string, unknown> = {};
  for (const [attribute, param] of Object.entries(paramAttributes)) {
    const value = take(attrs, attribute);
    if (value !== undefined) params[param] = value;
  }
  const systemInstructions = parseJsonAttribute(
    take(attrs, "gen_ai.system_instructions"),
    "gen_ai.system_instructions",
  );
  const systemText = Array.isArray(systemInstructions)
    ? systemInstructions.map((p: { content?: unknown }) => String(p?.content ?? "")).join("")
    : typeof systemInstructions === "string"
      ? systemInstructions
      : undefined;
  const messages = toOpenAiMessages(
    parseJsonAttribute(take(attrs, "gen_ai.input.messages"), "gen_ai.input.messages"),
  );
  if (systemText) messages.unshift({ role: "system", content: systemText });
  const output = outputOf(
    parseJsonAttribute(take(attrs, "gen_ai.output.messages"), "gen_ai.output.messages"),
  );
  const finishReasons = take(attrs, "gen_ai.response.finish_reasons");
  const definitions = parseJsonAttribute(take(attrs, "gen_ai.tool.definitions"), "gen_ai.tool.definitions");
  // the other instrumentations' styles, read only where the current conventions carried no messages
  const styled =
    messages.length === 0 && output.content === null && !output.toolCalls
      ? (readOpenInference(attrs) ?? readOpenLlmetry(attrs) ?? readVercelAi(attrs))
      : undefined;
  const inputTokens = asNumber(take(attrs, "gen_ai.usage.input_tokens")) ?? styled?.inputTokens;
  const outputTokens = asNumber(take(attrs, "gen_ai.usage.output_tokens")) ?? styled?.outputTokens;
  const tools = Array.isArray(definitions) ? (definitions as Record<string, unknown>[]) : styled?.tools;
  const modelRequested = take(attrs, "gen_ai.request.model") ?? styled?.model;
  const allParams = { ...styled?.params, ...params };
  return {
    modelRequested: modelRequested as string | undefined,
    modelServed: take(attrs, "gen_ai.response.model") as string | undefined,
    messages: styled?.messages ?? messages,
    tools,
    params: Object.keys(allParams).length ? allParams : undefined,
    output: styled?.output ?? {
      content: output.content,
      ...(output.toolCalls ? { toolCalls: output.toolCalls } : {}),
    },
    finishReason: Array.isArray(finishReasons)
      ? String(finishReasons[0])
      : (styled?.finishReason ?? output.finishReason),
    usage:
      inputTokens === undefined && outputTokens === undefined
        ? undefined
        : {
            promptTokens: inputTokens,
            completionTokens: outputTokens,
            totalTokens:
              inputTokens !== undefined && outputTokens !== undefined
                ? inputTokens + outputTokens
                : undefined,
          },
  };
}

/** One span as a Step of the trace it belongs to, or the reason it cannot be one. */
function stepOf(span: OtlpSpan, resource: Record<string, unknown>): { traceId: string; step: Step } | string {
  if (typeof span !== "object" || span === null || Array.isArray(span)) {
    return `span: expected an object, got ${span === null ? "null" : typeof span}`;
  }
  try {
    return readSpan(span, resource);
  } catch (error) {
    // Any value an exporter sends that the mapping cannot read costs that span only, as OTLP's partial success intends.
    return `span ${JSON.stringify(span.spanId ?? span.name ?? "?")}: ${(error as Error).message}`;
  }
}

function readSpan(
  span: OtlpSpan,
  resource: Record<string, unknown>,
): { traceId: string; step: Step } | string {
  const traceId = hexId(span.traceId, 16);
  const spanId = hexId(span.spanId, 8);
  if (!traceId)
    return `span "${span.name ?? "?"}": traceId must be 16 bytes as hex, got ${JSON.stringify(span.traceId)}`;
  if (!spanId)
    return `span "${span.name ?? "?"}": spanId must be 8 bytes as hex, got ${JSON.stringify(span.spanId)}`;
  const startedAt = isoFromNanos(span.startTimeUnixNano, "startTimeUnixNano");
  if (!startedAt) return `span ${spanId}: startTimeUnixNano is missing`;
  const endedAt = isoFromNanos(span.endTimeUnixNano, "endTimeUnixNano");
  const attrs = attributeMap(span.attributes);
  const operation = take(attrs, "gen_ai.operation.name");
  const kind = operation === undefined ? (styledStepKind(attrs) ?? "custom") : stepKindOf(operation);
  const parentId = hexId(span.parentSpanId, 8) ?? undefined;
  const errorType = take(attrs, "error.type");
  const failed = span.status?.code === spanStatusError || errorType !== undefined;
  const step: Record<string, unknown> = {
    id: spanId,
    kind,
    name: span.name,
    parentId,
    startedAt,
    endedAt,
    latencyMs: endedAt && endedAt >= startedAt ? Date.parse(endedAt) - Date.parse(startedAt) : undefined,
    error: failed
      ? {
          message: String(span.status?.message || errorType || "error"),
          type: errorType as string | undefined,
        }
      : undefined,
  };
  if (kind === "llm") step.llm = llmOf(attrs);
  if (kind === "tool" && attrs["gen_ai.tool.name"] !== undefined) {
    step.name = take(attrs, "gen_ai.tool.name") as string;
    step.input = parseJsonAttribute(take(attrs, "gen_ai.tool.call.arguments"), "gen_ai.tool.call.arguments");
    step.output = parseJsonAttribute(take(attrs, "gen_ai.tool.call.result"), "gen_ai.tool.call.result");
  } else if (kind === "tool") {
    const call = styledToolCall(attrs);
    step.name = call.name ?? span.name;
    step.input = call.input;
    step.output = call.output;
  }
  const metadata = { ...attrs, ...(Object.keys(resource).length ? { resource } : {}) };
  if (Object.keys(metadata).length) step.metadata = metadata;
  const read = readStep(step);
  if (read !== notAccepted) return { traceId, step: read };
  const parsed = Step.safeParse(step);
  if (!parsed.success)
    return `span ${spanId}: ${parsed.error.issues[0].path.join(".")}: ${parsed.error.issues[0].message}`;
  return { traceId, step: parsed.data };
}

/**
 * Maps an OTLP/JSON export to Arc traces, one per OTLP trace id, one step per span, following the OpenTelemetry
 * GenAI semantic conventions (`gen_ai.operation.name`, `gen_ai.request.*`, `gen_ai.usage.*`, `gen_ai.input.messages`,
 * `gen_ai.output.messages`, `gen_ai.tool.*`). Unusable spans are counted and explained, not fatal.
 */
export async function otlpToTraces(request: ExportTraceServiceRequest): Promise<OtlpMapping> {
  let sinceYield = 0;
  const errors: string[] = [];
  const byTrace = new Map<string, { steps: Step[]; user?: unknown; session?: unknown; service?: string }>();
  let rejectedSpans = 0;
  const reject = (count: number, why: string) => {
    rejectedSpans += count;
    if (errors.length < 10) errors.push(why);
  };
  for (const resourceSpans of request.resourceSpans ?? []) {
    let resource: Record<string, unknown>;
    let spans: { span: OtlpSpan }[];
    try {
      resource = attributeMap(resourceSpans?.resource?.attributes);
      spans = arrayOf(resourceSpans?.scopeSpans, "scopeSpans").flatMap((scopeSpans) =>
        arrayOf(scopeSpans?.spans, "spans").map((span) => ({ span })),
      );
    } catch (error) {
      reject(countSpans(resourceSpans), `resourceSpans: ${(error as Error).message}`);
      continue;
    }
    for (const { span } of spans) {
      if (++sinceYield === SPANS_PER_TURN) {
        sinceYield = 0;
        await nextTurn();
      }
      const mapped = stepOf(span, resource);
      if (typeof mapped === "string") {
        reject(1, mapped);
        continue;
      }
      const entry = byTrace.get(mapped.traceId) ?? {
        steps: [],
        service: typeof resource["service.name"] === "string" ? resource["service.name"] : undefined,
      };
      const meta = mapped.step.metadata ?? {};
      entry.user ??= meta["user.id"] ?? meta["enduser.id"];
      entry.session ??= meta["gen_ai.conversation.id"] ?? meta["session.id"];
      entry.steps.push(mapped.step);
      byTrace.set(mapped.traceId, entry);
    }
  }
  const traces: Trace[] = [];
  for (const [traceId, entry] of byTrace) {
    if (++sinceYield === SPANS_PER_TURN) {
      sinceYield = 0;
      await nextTurn();
    }
    const root = entry.steps.find((s) => !s.parentId);
    const starts = entry.steps.map((s) => s.startedAt).sort();
    const ends = entry.steps
      .map((s) => s.endedAt)
      .filter((e): e is string => e !== undefined)
      .sort();
    const input: TraceInput = {
      id: traceId,
      name: root?.name,
      startedAt: starts[0],
      endedAt: ends.at(-1),
      userId: traceIdentifier(entry.user),
      sessionId: traceIdentifier(entry.session),
      status: entry.steps.some((s) => s.error) ? "error" : "ok",
      metadata: entry.service ? { service: entry.service } : undefined,
      steps: entry.steps,
    };
    const read = readTrace(input);
    const parsed =
      read === notAccepted ? TraceSchema.safeParse(input) : { success: true as const, data: read };
    if (parsed.success) traces.push(parsed.data);
    else {
      const issue = parsed.error.issues[0];
      reject(entry.steps.length, `trace ${traceId}: ${issue.path.join(".")}: ${issue.message}`);
    }
  }
  return { traces, rejectedSpans, errors };
}

/** How many spans an export holds, counted without reading them; what a cap on spans a request checks. */
export function countSpans(resourceSpans: unknown): number {
  let count = 0;
  const scopes = (resourceSpans as { scopeSpans?: unknown })?.scopeSpans;
  if (!Array.isArray(scopes)) return 0;
  for (const scope of scopes) {
    const spans = (scope as { spans?: unknown })?.spans;
    if (Array.isArray(spans)) count += spans.length;
  }
  return count;
}
