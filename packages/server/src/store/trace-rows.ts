import { createHash } from "node:crypto";
import type { Step, Trace } from "@arc/core";

/** A content-addressed body (messages, tool definitions), stored once however many steps share it. */
export interface BlobRow {
  /** sha256 of `json`: the key steps reference. */
  hash: string;
  /** The body as JSON text. */
  json: string;
}

/** Column arrays for one bulk insert of traces (`unnest` takes one array per column). */
export interface TraceColumns {
  /** `Trace.id` per trace; every other array is aligned with this one. */
  id: string[];
  /** `Trace.name`; null when absent (so `coalesce` keeps a stored name on a re-send). */
  name: (string | null)[];
  /** ISO 8601 date-times. */
  startedAt: string[];
  /** ISO 8601 date-times; null while the episode runs. */
  endedAt: (string | null)[];
  /** `Trace.userId`. */
  userId: (string | null)[];
  /** `Trace.sessionId`. */
  sessionId: (string | null)[];
  /** `Trace.env`: selects the verifier. */
  env: (string | null)[];
  /** `ok`, `error` or `unknown`. */
  status: string[];
  /** `Trace.input` as JSON text (cast to jsonb in the insert); null when absent. */
  input: (string | null)[];
  /** `Trace.output` as JSON text. */
  output: (string | null)[];
  /** Postgres text-array literals (`{a,b}`): `unnest` cannot take an array of arrays. */
  tags: string[];
  /** `Trace.metadata` as JSON text. */
  metadata: (string | null)[];
  /** Text-array literals of every model requested or served in the trace, for filtering by model. */
  models: string[];
  /** Name, input, output and each step's last message and reply, capped at 2,000 characters, for text search. */
  searchText: string[];
}

/** Column arrays for one bulk insert of steps. */
export interface StepColumns {
  /** The trace each step belongs to; every other array is aligned with this one. */
  traceId: string[];
  /** `Step.id`. */
  id: string[];
  /** `Step.parentId`. */
  parentId: (string | null)[];
  /** `llm`, `tool`, `retrieval` or `custom`. */
  kind: string[];
  /** `Step.name`. */
  name: (string | null)[];
  /** ISO 8601 date-times. */
  startedAt: string[];
  /** ISO 8601 date-times; null while the step runs. */
  endedAt: (string | null)[];
  /** `Step.latencyMs`. */
  latencyMs: (number | null)[];
  /** `llm.modelRequested`, in a column of its own for filtering. */
  modelRequested: (string | null)[];
  /** `llm.modelServed`. */
  modelServed: (string | null)[];
  /** `llm.modelVersion`: which model version answered (canary analysis reads it). */
  modelVersion: (string | null)[];
  /** `llm.finishReason`. */
  finishReason: (string | null)[];
  /** `llm.usage.promptTokens`. */
  promptTokens: (number | null)[];
  /** `llm.usage.completionTokens`. */
  completionTokens: (number | null)[];
  /** `llm.usage.totalTokens`. */
  totalTokens: (number | null)[];
  /** Hash of the `llm.messages` blob: a conversation resent on every turn is stored once. */
  messagesHash: (string | null)[];
  /** Hash of the `llm.tools` blob, shared by every call offering the same tools. */
  toolsHash: (string | null)[];
  /** `llm.params` as JSON text. */
  params: (string | null)[];
  /** `Step.input` as JSON text. */
  input: (string | null)[];
  /** `Step.output` as JSON text; for `llm` steps `llm.output` (the reply and its tool calls). */
  output: (string | null)[];
  /** `Step.error` as JSON text. */
  error: (string | null)[];
  /** `Step.metadata` as JSON text. */
  metadata: (string | null)[];
}

const maxSearchTextLength = 2000;

function json(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value);
}

function textOf(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (Array.isArray(value))
    return value.map((part) => textOf((part as { text?: unknown })?.text ?? part)).join(" ");
  return JSON.stringify(value);
}

/** Postgres text[] literal: `{"a","b"}` with quotes and backslashes escaped. */
function textArrayLiteral(values: string[]): string {
  return `{${values.map((v) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`).join(",")}}`;
}

/** Text the `q` filter searches: the trace's name, input and output, and each LLM step's last message and output. */
function searchTextOf(trace: Trace): string {
  const parts = [trace.name ?? "", textOf(trace.input), textOf(trace.output)];
  for (const step of trace.steps) {
    if (step.llm) {
      const last = step.llm.messages.at(-1);
      if (last) parts.push(textOf(last.content));
      parts.push(step.llm.output?.content ?? "");
    } else {
      parts.push(textOf(step.input), textOf(step.output));
    }
  }
  return parts
    .filter((p) => p !== "")
    .join("\n")
    .slice(0, maxSearchTextLength);
}

function blobOf(value: unknown, blobs: Map<string, BlobRow>): string | null {
  if (value === undefined) return null;
  const text = JSON.stringify(value);
  const hash = createHash("sha256").update(text).digest("hex");
  if (!blobs.has(hash)) blobs.set(hash, { hash, json: text });
  return hash;
}

function modelsOf(steps: Step[]): string[] {
  const models = new Set<string>();
  for (const step of steps) {
    if (step.llm?.modelRequested) models.add(step.llm.modelRequested);
    if (step.llm?.modelServed) models.add(step.llm.modelServed);
  }
  return [...models];
}

/** Turns validated traces into column arrays for bulk inserts, with large bodies split out by content hash. */
export function toRows(traces: Trace[]): { traces: TraceColumns; steps: StepColumns; blobs: BlobRow[] } {
  const t: TraceColumns = {
    id: [],
    name: [],
    startedAt: [],
    endedAt: [],
    userId: [],
    sessionId: [],
    env: [],
    status: [],
    input: [],
    output: [],
    tags: [],
    metadata: [],
    models: [],
    searchText: [],
  };
  const s: StepColumns = {
    traceId: [],
    id: [],
    parentId: [],
    kind: [],
    name: [],
    startedAt: [],
    endedAt: [],
    latencyMs: [],
    modelRequested: [],
    modelServed: [],
    modelVersion: [],
    finishReason: [],
    promptTokens: [],
    completionTokens: [],
    totalTokens: [],
    messagesHash: [],
    toolsHash: [],
    params: [],
    input: [],
    output: [],
    error: [],
    metadata: [],
  };
  const blobs = new Map<string, BlobRow>();
  for (const trace of traces) {
    t.id.push(trace.id);
    t.name.push(trace.name ?? null);
    t.startedAt.push(trace.startedAt);
    t.endedAt.push(trace.endedAt ?? null);
    t.userId.push(trace.userId ?? null);
    t.sessionId.push(trace.sessionId ?? null);
    t.env.push(trace.env ?? null);
    t.status.push(trace.status);
    t.input.push(json(trace.input));
    t.output.push(json(trace.output));
    t.tags.push(textArrayLiteral(trace.tags ?? []));
    t.metadata.push(json(trace.metadata));
    t.models.push(textArrayLiteral(modelsOf(trace.steps)));
    t.searchText.push(searchTextOf(trace));
    for (const step of trace.steps) {
      const llm = step.llm;
      s.traceId.push(trace.id);
      s.id.push(step.id);
      s.parentId.push(step.parentId ?? null);
      s.kind.push(step.kind);
      s.name.push(step.name ?? null);
      s.startedAt.push(step.startedAt);
      s.endedAt.push(step.endedAt ?? null);
      s.latencyMs.push(step.latencyMs ?? null);
      s.modelRequested.push(llm?.modelRequested ?? null);
      s.modelServed.push(llm?.modelServed ?? null);
      s.modelVersion.push(llm?.modelVersion ?? null);
      s.finishReason.push(llm?.finishReason ?? null);
      s.promptTokens.push(llm?.usage?.promptTokens ?? null);
      s.completionTokens.push(llm?.usage?.completionTokens ?? null);
      s.totalTokens.push(llm?.usage?.totalTokens ?? null);
      s.messagesHash.push(llm ? blobOf(llm.messages, blobs) : null);
      s.toolsHash.push(llm?.tools ? blobOf(llm.tools, blobs) : null);
      s.params.push(json(llm?.params));
      s.input.push(json(step.input));
      s.output.push(json(llm ? llm.output : step.output));
      s.error.push(json(step.error));
      s.metadata.push(json(step.metadata));
    }
  }
  return { traces: t, steps: s, blobs: [...blobs.values()] };
}
