import { type ChatMessage, type Feedback, InvalidInputError, NotFoundError, type Trace } from "@arc/core";
import type { Queryable, Row } from "./database.ts";
import { toRows } from "./trace-rows.ts";
import { keepTraceStatisticsCurrent } from "./trace-statistics.ts";

export { listTraces, type TraceQuery, type TraceSummary } from "./trace-list.ts";

/** How many traces and steps a batch wrote anew (re-sent ones are not counted again). */
export interface InsertResult {
  /** Traces stored for the first time. */
  traces: number;
  /** Steps stored for the first time. */
  steps: number;
}

/** Most rows one statement of a batch writes: larger batches go in slices, and other queries run between them. */
export const WRITE_SLICE_ROWS = 250;

function iso(value: unknown): string | null {
  return value === null || value === undefined ? null : new Date(value as string).toISOString();
}

/** Throws an InvalidInputError naming the first trace id that appears twice in `traces`. */
export function rejectDuplicateIds(traces: Trace[]): void {
  const seen = new Set<string>();
  traces.forEach((trace, i) => {
    if (seen.has(trace.id)) {
      throw new InvalidInputError(`traces.${i}.id: trace id "${trace.id}" appears twice in one batch`, {
        field: `traces.${i}.id`,
      });
    }
    seen.add(trace.id);
  });
}

/**
 * Writes a batch of validated traces. Idempotent: a trace id already stored is merged (first values kept, missing
 * ones filled in, models and tags united, metadata keys merged with the first value of a key kept, `error` status
 * wins), a step id already stored for its trace is merged too (what it lacks filled in, nothing replaced: see
 * `STEP_MERGE`). A batch of up to `WRITE_SLICE_ROWS` traces and steps is one statement, all of it or none of it; a
 * larger one is written in slices of whole traces, one statement each, so that other tenants' queries run between
 * them (a slice that fails leaves the earlier ones, which a retry of the same batch merges without duplicating).
 */
export async function insertTraces(db: Queryable, tenantId: string, traces: Trace[]): Promise<InsertResult> {
  rejectDuplicateIds(traces);
  const total: InsertResult = { traces: 0, steps: 0 };
  for (const slice of traceSlices(traces)) {
    const written = await insertTraceSlice(db, tenantId, slice);
    total.traces += written.traces;
    total.steps += written.steps;
  }
  return total;
}

/** Consecutive runs of whole traces holding at most `WRITE_SLICE_ROWS` traces and steps (a larger trace alone). */
function traceSlices(traces: Trace[]): Trace[][] {
  const out: Trace[][] = [];
  let current: Trace[] = [];
  let rows = 0;
  for (const trace of traces) {
    const size = 1 + trace.steps.length;
    if (current.length > 0 && rows + size > WRITE_SLICE_ROWS) {
      out.push(current);
      current = [];
      rows = 0;
    }
    current.push(trace);
    rows += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/** What one statement wrote of one trace of its batch. */
export interface TraceWritten {
  /** The trace's id. */
  id: string;
  /** Stored for the first time (false: merged into the stored trace). */
  inserted: boolean;
  /** Its steps stored for the first time. */
  steps: number;
}

/** One statement writing `traces` and their steps atomically; after it, it may ANALYZE `traces`. */
async function insertTraceSlice(db: Queryable, tenantId: string, traces: Trace[]): Promise<InsertResult> {
  const written = await insertTraceStatement(db, tenantId, traces);
  return {
    traces: written.filter((w) => w.inserted).length,
    steps: written.reduce((n, w) => n + w.steps, 0),
  };
}

/** The step columns a later copy of a stored step fills in where the stored one has none. */
const STEP_FILLED_COLUMNS = [
  "parent_id",
  "name",
  "ended_at",
  "latency_ms",
  "model_requested",
  "model_served",
  "model_version",
  "finish_reason",
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "messages_hash",
  "tools_hash",
  "params",
  "input",
  "output",
  "error",
];

/**
 * How a step id already stored merges a later copy of it (the SDK's copy of a step the gateway recorded): each column
 * it lacks is filled in, its metadata gains the keys it lacks (the first value of a key kept), and nothing it has is
 * replaced; a copy that adds nothing writes nothing. A merge that writes queues the trace to be judged again.
 */
const STEP_MERGE = `${STEP_FILLED_COLUMNS.map((c) => `${c} = coalesce(steps.${c}, excluded.${c})`).join(", ")},
         metadata = case when steps.metadata is null then excluded.metadata
                         when excluded.metadata is null then steps.metadata
                         else excluded.metadata || steps.metadata end
       where ${STEP_FILLED_COLUMNS.map((c) => `(steps.${c} is null and excluded.${c} is not null)`).join(" or ")}
          or (excluded.metadata is not null
              and (steps.metadata is null or excluded.metadata || steps.metadata <> steps.metadata))`;

/** A trace with only the first step of each step id it lists: a batch stores one step per id, as a re-send does. */
function firstOfEachStepId(trace: Trace): Trace {
  const ids = new Set(trace.steps.map((step) => step.id));
  if (ids.size === trace.steps.length) return trace;
  return { ...trace, steps: trace.steps.filter((step) => ids.delete(step.id)) };
}

/**
 * One statement writing `traces` (distinct ids) and their steps atomically, whatever their number, with what it wrote
 * of each trace; after it, it may ANALYZE `traces`. `insertTraces` slices large batches; the trace writer joins
 * concurrent small ones.
 */
export async function insertTraceStatement(
  db: Queryable,
  tenantId: string,
  traces: Trace[],
): Promise<TraceWritten[]> {
  const { traces: t, steps: s, blobs } = toRows(traces.map(firstOfEachStepId));
  // One statement, so one round trip and one implicit transaction: the foreign key from steps to traces is
  // checked at the end of the statement, after every CTE has inserted. Each table's columns travel as one JSON
  // object of arrays (`json_to_record` turns each into a PostgreSQL array), which the client encodes natively,
  // where a text array parameter per column is escaped element by element in JavaScript.
  const rows = await db.query<{ id: string; inserted: boolean; steps: number }>(
    `with new_blobs as (
       insert into blobs (tenant_id, hash, body)
       select $1, x.hash, x.body::jsonb
       from json_to_record($2::json) as c(hash text[], body text[]), unnest(c.hash, c.body) as x(hash, body)
       on conflict do nothing
     ),
     new_traces as (
       insert into traces (tenant_id, id, name, started_at, ended_at, user_id, session_id, env, status,
                           input, output, tags, metadata, models, search_text)
       select $1, x.id, x.name, x.started_at, x.ended_at, x.user_id, x.session_id, x.env, x.status,
              x.input::jsonb, x.output::jsonb, x.tags::text[], x.metadata::jsonb, x.models::text[], x.search_text
       from json_to_record($3::json)
              as c(id text[], name text[], "startedAt" timestamptz[], "endedAt" timestamptz[], "userId" text[],
                   "sessionId" text[], env text[], status text[], input text[], output text[], tags text[],
                   metadata text[], models text[], "searchText" text[]),
            unnest(c.id, c.name, c."startedAt", c."endedAt", c."userId", c."sessionId", c.env, c.status, c.input,
                   c.output, c.tags, c.metadata, c.models, c."searchText")
              as x(id, name, started_at, ended_at, user_id, session_id, env, status, input, output, tags, metadata,
                   models, search_text)
       on conflict (tenant_id, id) do update set
         name = coalesce(traces.name, excluded.name),
         started_at = least(traces.started_at, excluded.started_at),
         ended_at = greatest(traces.ended_at, excluded.ended_at),
         user_id = coalesce(traces.user_id, excluded.user_id),
         session_id = coalesce(traces.session_id, excluded.session_id),
         env = coalesce(traces.env, excluded.env),
         status = case when 'error' in (traces.status, excluded.status) then 'error'
                       when traces.status = 'unknown' then excluded.status else traces.status end,
         input = coalesce(traces.input, excluded.input),
         output = coalesce(traces.output, excluded.output),
         tags = array(select distinct unnest(traces.tags || excluded.tags) order by 1),
         metadata = case when traces.metadata is null then excluded.metadata
                         when excluded.metadata is null then traces.metadata
                         else excluded.metadata || traces.metadata end,
         models = array(select distinct unnest(traces.models || excluded.models) order by 1),
         search_text = case when traces.search_text = '' then excluded.search_text
                            else left(traces.search_text || E'\\n' || excluded.search_text, 2000) end
       returning id, (xmax = 0) as inserted
     ),
     new_steps as (
       insert into steps (tenant_id, trace_id, id, parent_id, kind, name, started_at, ended_at, latency_ms,
                          model_requested, model_served, model_version, finish_reason, prompt_tokens,
                          completion_tokens, total_tokens, messages_hash, tools_hash, params, input, output,
                          error, metadata)
       select $1, x.trace_id, x.id, x.parent_id, x.kind, x.name, x.started_at, x.ended_at, x.latency_ms,
              x.model_requested, x.model_served, x.model_version, x.finish_reason, x.prompt_tokens,
              x.completion_tokens, x.total_tokens, x.messages_hash, x.tools_hash, x.params::jsonb, x.input::jsonb,
              x.output::jsonb, x.error::jsonb, x.metadata::jsonb
       from json_to_record($4::json)
              as c("traceId" text[], id text[], "parentId" text[], kind text[], name text[], "startedAt" timestamptz[],
                   "endedAt" timestamptz[], "latencyMs" float8[], "modelRequested" text[], "modelServed" text[],
                   "modelVersion" text[], "finishReason" text[], "promptTokens" int[], "completionTokens" int[],
                   "totalTokens" int[], "messagesHash" text[], "toolsHash" text[], params text[], input text[],
                   output text[], error text[], metadata text[]),
            unnest(c."traceId", c.id, c."parentId", c.kind, c.name, c."startedAt", c."endedAt", c."latencyMs",
                   c."modelRequested", c."modelServed", c."modelVersion", c."finishReason", c."promptTokens",
                   c."completionTokens", c."totalTokens", c."messagesHash", c."toolsHash", c.params, c.input,
                   c.output, c.error, c.metadata) with ordinality
              as x(trace_id, id, parent_id, kind, name, started_at, ended_at, latency_ms, model_requested,
                   model_served, model_version, finish_reason, prompt_tokens, completion_tokens, total_tokens,
                   messages_hash, tools_hash, params, input, output, error, metadata, position)
       order by x.position
       on conflict (tenant_id, trace_id, id) do update set ${STEP_MERGE}
       returning trace_id, (xmax = 0) as inserted
     )
     select t.id, t.inserted, coalesce(s.steps, 0) as steps
     from new_traces t
     left join (select trace_id, (count(*) filter (where inserted))::int as steps from new_steps group by trace_id) s
       on s.trace_id = t.id`,
    [
      tenantId,
      JSON.stringify({ hash: blobs.map((b) => b.hash), body: blobs.map((b) => b.json) }),
      JSON.stringify(t),
      JSON.stringify(s),
    ],
  );
  await keepTraceStatisticsCurrent(
    db,
    rows.reduce((n, r) => n + (r.inserted ? 1 : 0), 0),
  );
  return rows;
}

function dropNulls<T extends Record<string, unknown>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== null && v !== undefined)) as T;
}

/** One trace with its steps (in start order, bodies restored) and its feedback, in the shape it was sent. */
export async function getTrace(
  db: Queryable,
  tenantId: string,
  traceId: string,
): Promise<Trace & { feedback: Feedback[] }> {
  const trace = (await getTraces(db, tenantId, [traceId])).get(traceId);
  if (!trace) throw new NotFoundError(`no trace with id "${traceId}"`);
  return trace;
}

/**
 * Many traces of a tenant, as `getTrace` gives them, in three queries whatever their number (workers and dataset
 * synthesis read hundreds at a time). Ids the tenant does not have are absent from the map.
 */
export async function getTraces(
  db: Queryable,
  tenantId: string,
  traceIds: string[],
): Promise<Map<string, Trace & { feedback: Feedback[] }>> {
  const traces = await db.query<Row>("select * from traces where tenant_id = $1 and id = any($2::text[])", [
    tenantId,
    traceIds,
  ]);
  const steps = await db.query<Row>(
    `select s.*, m.body as messages, tl.body as tools from steps s
     left join blobs m on m.tenant_id = s.tenant_id and m.hash = s.messages_hash
     left join blobs tl on tl.tenant_id = s.tenant_id and tl.hash = s.tools_hash
     where s.tenant_id = $1 and s.trace_id = any($2::text[]) order by s.trace_id, s.started_at, s.arrival`,
    [tenantId, traceIds],
  );
  const feedback = await db.query<Row>(
    "select * from feedback where tenant_id = $1 and trace_id = any($2::text[]) order by trace_id, created_at, id",
    [tenantId, traceIds],
  );
  const group = (rows: Row[]) => {
    const by = new Map<string, Row[]>();
    for (const r of rows) {
      const list = by.get(r.trace_id as string);
      if (list) list.push(r);
      else by.set(r.trace_id as string, [r]);
    }
    return by;
  };
  const stepsOf = group(steps);
  const feedbackOf = group(feedback);
  return new Map(
    traces.map((t) => [
      t.id as string,
      toTrace(t, stepsOf.get(t.id as string) ?? [], feedbackOf.get(t.id as string) ?? []),
    ]),
  );
}

/** A stored trace row with its step and feedback rows, in the shape it was sent. */
function toTrace(t: Row, steps: Row[], feedback: Row[]): Trace & { feedback: Feedback[] } {
  return dropNulls({
    id: t.id as string,
    name: t.name as string | undefined,
    startedAt: iso(t.started_at) as string,
    endedAt: iso(t.ended_at) ?? undefined,
    userId: t.user_id as string | undefined,
    sessionId: t.session_id as string | undefined,
    env: t.env as string | undefined,
    status: t.status as Trace["status"],
    input: t.input ?? undefined,
    output: t.output ?? undefined,
    tags: t.tags as string[],
    metadata: (t.metadata as Record<string, unknown> | null) ?? undefined,
    steps: steps.map((s) =>
      dropNulls({
        id: s.id as string,
        kind: s.kind as Trace["steps"][number]["kind"],
        name: s.name as string | undefined,
        parentId: s.parent_id as string | undefined,
        startedAt: iso(s.started_at) as string,
        endedAt: iso(s.ended_at) ?? undefined,
        latencyMs: s.latency_ms as number | undefined,
        llm:
          s.kind === "llm"
            ? dropNulls({
                modelRequested: s.model_requested as string | undefined,
                modelServed: s.model_served as string | undefined,
                modelVersion: s.model_version as string | undefined,
                messages: (s.messages as ChatMessage[] | null) ?? [],
                tools: s.tools as Record<string, unknown>[] | undefined,
                params: s.params as Record<string, unknown> | undefined,
                output: s.output as { content?: string | null } | undefined,
                finishReason: s.finish_reason as string | undefined,
                usage:
                  s.prompt_tokens === null && s.completion_tokens === null && s.total_tokens === null
                    ? undefined
                    : dropNulls({
                        promptTokens: s.prompt_tokens as number | undefined,
                        completionTokens: s.completion_tokens as number | undefined,
                        totalTokens: s.total_tokens as number | undefined,
                      }),
              })
            : undefined,
        input: s.input ?? undefined,
        output: s.kind === "llm" ? undefined : (s.output ?? undefined),
        error: (s.error as Trace["steps"][number]["error"]) ?? undefined,
        metadata: (s.metadata as Record<string, unknown> | null) ?? undefined,
      }),
    ),
    feedback: feedback.map((f) =>
      dropNulls({
        id: f.id as string,
        traceId: f.trace_id as string,
        stepId: f.step_id as string | undefined,
        score: f.score as number | undefined,
        label: f.label as string | undefined,
        correction: f.correction as string | undefined,
        comment: f.comment as string | undefined,
        createdAt: iso(f.created_at) as string,
      }),
    ),
  });
}

/** Splits `items` into consecutive slices of at most `size`. */
function slices<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Records feedback on a trace (or one of its steps). Idempotent: re-sending a feedback id changes nothing. */
export async function insertFeedback(
  db: Queryable,
  tenantId: string,
  feedback: Feedback,
): Promise<{ created: boolean }> {
  return { created: (await insertFeedbackBatch(db, tenantId, [feedback])) === 1 };
}

/**
 * Records a batch of feedback; returns how many items were new (re-sent ids change nothing). Every item's trace and
 * step are checked before anything is written, so an unknown one (a NotFoundError naming it) writes nothing. The
 * rows are then written `WRITE_SLICE_ROWS` at a time, one statement each, so that a 20,000-item import leaves the
 * embedded database to other tenants' queries between slices.
 */
export async function insertFeedbackBatch(
  db: Queryable,
  tenantId: string,
  items: readonly Feedback[],
): Promise<number> {
  const parts = slices(items, WRITE_SLICE_ROWS);
  for (const slice of parts) {
    const missing = await db.query<{ position: number; trace_missing: boolean }>(
      `select x.position::int as position, t.id is null as trace_missing
       from unnest($2::text[], $3::text[]) with ordinality as x(trace_id, step_id, position)
       left join traces t on t.tenant_id = $1 and t.id = x.trace_id
       left join steps s on s.tenant_id = $1 and s.trace_id = x.trace_id and s.id = x.step_id
       where t.id is null or (x.step_id is not null and s.id is null)
       order by x.position limit 1`,
      [tenantId, slice.map((f) => f.traceId), slice.map((f) => f.stepId ?? null)],
    );
    if (missing.length > 0) {
      const item = slice[missing[0].position - 1];
      throw new NotFoundError(
        missing[0].trace_missing
          ? `no trace with id "${item.traceId}"`
          : `no step "${item.stepId}" in trace "${item.traceId}"`,
      );
    }
  }
  let created = 0;
  for (const slice of parts) {
    const rows = await db.query(
      `insert into feedback (tenant_id, id, trace_id, step_id, score, label, correction, comment, created_at)
       select $1, id, trace_id, step_id, score, label, correction, comment, coalesce(created_at, now())
       from unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::text[], $7::text[], $8::text[],
                   $9::timestamptz[]) as x(id, trace_id, step_id, score, label, correction, comment, created_at)
       on conflict do nothing returning 1`,
      [
        tenantId,
        slice.map((f) => f.id),
        slice.map((f) => f.traceId),
        slice.map((f) => f.stepId ?? null),
        slice.map((f) => f.score ?? null),
        slice.map((f) => f.label ?? null),
        slice.map((f) => f.correction ?? null),
        slice.map((f) => f.comment ?? null),
        slice.map((f) => f.createdAt ?? null),
      ],
    );
    created += rows.length;
  }
  return created;
}
