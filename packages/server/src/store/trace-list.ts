import { InvalidInputError } from "@arc/core";
import type { Queryable, Row } from "./database.ts";

/** Filters of `GET /v1/traces`; every one given must hold. */
export interface TraceQuery {
  /** Traces that started at or after this time. */
  from?: string;
  /** Traces that started before this time. */
  to?: string;
  /** Traces with an LLM step that asked for, or was answered by, this model. */
  model?: string;
  /** Traces whose verdict, or one of whose LLM steps, names this model version. */
  modelVersion?: string;
  /** Traces of this task family (`Trace.env`). */
  env?: string;
  /** Only traces that ended this way. */
  status?: "ok" | "error" | "unknown";
  /** Traces judged this way; `unjudged` for traces with no verdict yet. */
  verdict?: "failed" | "passed" | "unknown" | "unjudged";
  /** Traces whose verdict has this failure class. */
  failureClass?: string;
  /** Traces assigned to this failure pattern. */
  patternId?: string;
  /** `Trace.userId`. */
  userId?: string;
  /** `Trace.sessionId`. */
  sessionId?: string;
  /** Traces carrying this tag. */
  tag?: string;
  /** Traces that lasted at least this long (end minus start; running traces never match). */
  minLatencyMs?: number;
  /** Traces that lasted at most this long. */
  maxLatencyMs?: number;
  /** Traces whose steps used at least this many tokens in all. */
  minTokens?: number;
  /** Traces whose steps used at most this many tokens in all. */
  maxTokens?: number;
  /** Case-insensitive text in the trace's name, input, output or LLM messages. */
  text?: string;
  /** `desc` (newest first, the default) or `asc` (a session's traces in the order they ran). */
  order?: "asc" | "desc";
  /** At most this many traces (1-500, default 50). */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

/** A trace's verdict as a listing shows it. */
export interface TraceVerdictSummary {
  /** `failed`, `passed` or `unknown`. */
  status: string;
  failureClass: string | null;
  patternId: string | null;
  modelVersion: string | null;
}

/** A trace in a listing, without its steps. */
export interface TraceSummary {
  /** The sender's trace id. */
  id: string;
  /** `Trace.name`. */
  name: string | null;
  /** ISO 8601 date-time. */
  startedAt: string;
  /** ISO 8601 date-time; null while the episode runs. */
  endedAt: string | null;
  /** `ok`, `error` or `unknown`. */
  status: string;
  /** `Trace.userId`. */
  userId: string | null;
  /** `Trace.sessionId`. */
  sessionId: string | null;
  /** `Trace.env`. */
  env: string | null;
  /** Every model requested or served in the trace's LLM steps. */
  models: string[];
  /** `Trace.tags`. */
  tags: string[];
  /** Steps stored so far. */
  stepCount: number;
  /** End minus start in milliseconds; null while the episode runs. */
  latencyMs: number | null;
  /** Tokens of all its LLM steps (0 when none reported usage). */
  totalTokens: number;
  /** The model version its verdict, else its last LLM step, names. */
  modelVersion: string | null;
  /** Its verdict; null before detection judged it. */
  verdict: TraceVerdictSummary | null;
  /** The first 200 characters of its searchable text (input, then output). */
  preview: string;
}

function iso(value: unknown): string | null {
  return value === null || value === undefined ? null : new Date(value as string).toISOString();
}

function encodeCursor(startedAt: string, id: string): string {
  return Buffer.from(JSON.stringify([startedAt, id])).toString("base64url");
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && typeof value[0] === "string" && typeof value[1] === "string")
      return [value[0], value[1]];
  } catch {
    // fall through to the error below
  }
  throw new InvalidInputError(
    "cursor: not a cursor this server made; pass nextCursor from the previous page",
    { field: "cursor" },
  );
}

/** The trace's latency in milliseconds as SQL. */
const latencySql = "extract(epoch from (t.ended_at - t.started_at)) * 1000";
/** The trace's tokens in all as SQL (a sum over its steps, by the steps' primary key). */
const tokensSql =
  "(select coalesce(sum(s.total_tokens), 0) from steps s where s.tenant_id = t.tenant_id and s.trace_id = t.id)";

/** The SQL conditions of `query`'s filters (and cursor) with their parameters, the tenant's id as `$1`. */
function traceConditions(
  tenantId: string,
  query: TraceQuery,
  order: "asc" | "desc",
): { conditions: string[]; params: unknown[] } {
  const conditions = ["t.tenant_id = $1"];
  const params: unknown[] = [tenantId];
  const add = (sql: string, ...values: unknown[]) => {
    let text = sql;
    for (const value of values) {
      params.push(value);
      text = text.replace("?", `$${params.length}`);
    }
    conditions.push(text);
  };
  if (query.from) add("t.started_at >= ?", query.from);
  if (query.to) add("t.started_at < ?", query.to);
  if (query.model) add("? = any(t.models)", query.model);
  if (query.status) add("t.status = ?", query.status);
  if (query.env) add("t.env = ?", query.env);
  if (query.userId) add("t.user_id = ?", query.userId);
  if (query.sessionId) add("t.session_id = ?", query.sessionId);
  if (query.tag) add("t.tags @> array[?]::text[]", query.tag);
  if (query.verdict === "unjudged") conditions.push("v.trace_id is null");
  else if (query.verdict) add("v.status = ?", query.verdict);
  if (query.failureClass) add("v.failure_class = ?", query.failureClass);
  if (query.patternId)
    add(
      "exists (select 1 from failures f where f.tenant_id = t.tenant_id and f.trace_id = t.id and f.pattern_id = ?)",
      query.patternId,
    );
  if (query.modelVersion)
    add(
      `(v.model_version = ? or exists (select 1 from steps s where s.tenant_id = t.tenant_id and s.trace_id = t.id
        and s.model_version = ?))`,
      query.modelVersion,
      query.modelVersion,
    );
  if (query.minLatencyMs !== undefined) add(`${latencySql} >= ?`, query.minLatencyMs);
  if (query.maxLatencyMs !== undefined) add(`${latencySql} <= ?`, query.maxLatencyMs);
  if (query.minTokens !== undefined) add(`${tokensSql} >= ?`, query.minTokens);
  if (query.maxTokens !== undefined) add(`${tokensSql} <= ?`, query.maxTokens);
  if (query.text) add("t.search_text ilike ?", `%${query.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  if (query.cursor) {
    const [startedAt, id] = decodeCursor(query.cursor);
    add(`(t.started_at, t.id) ${order === "desc" ? "<" : ">"} (?::timestamptz, ?)`, startedAt, id);
  }
  return { conditions, params };
}

/** A row of `listTraces`'s query as the API answers it. */
function traceSummary(r: Row): TraceSummary {
  return {
    id: r.id as string,
    name: (r.name as string | null) ?? null,
    startedAt: iso(r.started_at) as string,
    endedAt: iso(r.ended_at),
    status: r.status as string,
    userId: (r.user_id as string | null) ?? null,
    sessionId: (r.session_id as string | null) ?? null,
    env: (r.env as string | null) ?? null,
    models: r.models as string[],
    tags: r.tags as string[],
    stepCount: r.step_count as number,
    latencyMs: r.latency_ms === null ? null : Number(r.latency_ms),
    totalTokens: r.total_tokens as number,
    modelVersion:
      (r.verdict_model_version as string | null) ?? (r.step_model_version as string | null) ?? null,
    verdict:
      r.verdict_status === null
        ? null
        : {
            status: r.verdict_status as string,
            failureClass: (r.failure_class as string | null) ?? null,
            patternId: (r.pattern_id as string | null) ?? null,
            modelVersion: (r.verdict_model_version as string | null) ?? null,
          },
    preview: r.preview as string,
  };
}

/**
 * A page of a tenant's traces with a cursor to the next page (null on the last). Pages are keyset pages over
 * `(started_at, id)`, read along `traces_by_time` (or the user's or session's index), so a page costs the same
 * at the millionth trace as at the first; filters on the verdict, pattern, latency and tokens are checked on the
 * traces read in that order.
 */
export async function listTraces(
  db: Queryable,
  tenantId: string,
  query: TraceQuery,
): Promise<{ data: TraceSummary[]; nextCursor: string | null }> {
  const limit = query.limit ?? 50;
  const order = query.order ?? "desc";
  const { conditions, params } = traceConditions(tenantId, query, order);
  params.push(limit + 1);
  const rows = await db.query<Row>(
    `select t.id, t.name, t.started_at, t.ended_at, t.status, t.user_id, t.session_id, t.env, t.models, t.tags,
            left(t.search_text, 200) as preview, ${latencySql} as latency_ms,
            v.status as verdict_status, v.failure_class, v.pattern_id, v.model_version as verdict_model_version,
            st.step_count, st.total_tokens, st.model_version as step_model_version
     from traces t
     left join verdicts v on v.tenant_id = t.tenant_id and v.trace_id = t.id
     cross join lateral (
       select count(*)::int as step_count, coalesce(sum(s.total_tokens), 0)::int as total_tokens,
              (array_agg(s.model_version order by s.started_at desc) filter (where s.model_version is not null))[1]
                as model_version
       from steps s where s.tenant_id = t.tenant_id and s.trace_id = t.id
     ) st
     where ${conditions.join(" and ")}
     order by t.started_at ${order}, t.id ${order} limit $${params.length}`,
    params,
  );
  const page = rows.slice(0, limit).map(traceSummary);
  const last = page.at(-1);
  return {
    data: page,
    nextCursor: rows.length > limit && last ? encodeCursor(last.startedAt, last.id) : null,
  };
}
