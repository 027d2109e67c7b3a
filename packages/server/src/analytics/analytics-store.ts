import type { Queryable } from "../store/database.ts";

/** A half-open time range [from, to). */
export interface Window {
  from: Date;
  to: Date;
}

const range = (w: Window) => [w.from.toISOString(), w.to.toISOString()];

/** Patterns whose first failure falls in the window, per ISO week (Monday, UTC) as `YYYY-MM-DD`. */
export async function patternsFirstSeenByWeek(
  db: Queryable,
  tenantId: string,
  w: Window,
): Promise<{ week: string; patterns: number }[]> {
  const rows = await db.query<{ week: string; n: number }>(
    `select to_char(date_trunc('week', first_seen at time zone 'UTC'), 'YYYY-MM-DD') as week, count(*)::int as n
       from patterns where tenant_id = $1 and first_seen >= $2 and first_seen < $3 group by 1 order by 1`,
    [tenantId, ...range(w)],
  );
  return rows.map((r) => ({ week: r.week, patterns: Number(r.n) }));
}

/** Every pattern of the tenant: id, label and when its first failure started. */
export async function patternHeads(
  db: Queryable,
  tenantId: string,
): Promise<{ id: string; label: string; firstSeen: Date | null }[]> {
  const rows = await db.query<{ id: string; label: string; first_seen: string | null }>(
    "select id, label, first_seen from patterns where tenant_id = $1 order by id",
    [tenantId],
  );
  return rows.map((r) => ({
    id: r.id,
    label: r.label,
    firstSeen: r.first_seen ? new Date(r.first_seen) : null,
  }));
}

/** Deployments promoted in the window, oldest first, with the time of promotion (their last status change). */
export async function promotionsBetween(
  db: Queryable,
  tenantId: string,
  w: Window,
): Promise<{ id: string; candidateId: string; controlId: string; at: Date }[]> {
  const rows = await db.query<{ id: string; candidate_id: string; control_id: string; updated_at: string }>(
    `select id, candidate_id, control_id, updated_at from deployments
      where tenant_id = $1 and status = 'promoted' and updated_at >= $2 and updated_at < $3 order by updated_at, id`,
    [tenantId, ...range(w)],
  );
  return rows.map((r) => ({
    id: r.id,
    candidateId: r.candidate_id,
    controlId: r.control_id,
    at: new Date(r.updated_at),
  }));
}

/** The latest promoted deployment of each of these versions: the baseline (control) it replaced, and when. */
export async function replacementsOf(
  db: Queryable,
  tenantId: string,
  versionIds: string[],
): Promise<{ id: string; candidateId: string; controlId: string; at: Date }[]> {
  if (versionIds.length === 0) return [];
  const rows = await db.query<{ id: string; candidate_id: string; control_id: string; updated_at: string }>(
    `select distinct on (candidate_id) id, candidate_id, control_id, updated_at from deployments
      where tenant_id = $1 and status = 'promoted' and candidate_id = any($2::text[])
      order by candidate_id, updated_at desc, id`,
    [tenantId, versionIds],
  );
  return rows.map((r) => ({
    id: r.id,
    candidateId: r.candidate_id,
    controlId: r.control_id,
    at: new Date(r.updated_at),
  }));
}

/** Traces the tenant started in the window. */
export async function tracesBetween(db: Queryable, tenantId: string, w: Window): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from traces where tenant_id = $1 and started_at >= $2 and started_at < $3",
    [tenantId, ...range(w)],
  );
  return Number(row?.n ?? 0);
}

/** Failures per pattern among traces started in the window. */
export async function patternFailuresBetween(
  db: Queryable,
  tenantId: string,
  w: Window,
): Promise<Map<string, number>> {
  const rows = await db.query<{ pattern_id: string; n: number }>(
    `select pattern_id, count(*)::int as n from failures
      where tenant_id = $1 and started_at >= $2 and started_at < $3 group by 1`,
    [tenantId, ...range(w)],
  );
  return new Map(rows.map((r) => [r.pattern_id, Number(r.n)]));
}

/** Tokens of LLM steps by the names a step records of its model: the version, the served and the requested name. */
export interface ModelTokens {
  /** The Arc model version that answered (null for calls Arc did not route). */
  modelVersion: string | null;
  modelServed: string | null;
  modelRequested: string | null;
  promptTokens: number;
  completionTokens: number;
}

/** Prompt and completion tokens of LLM steps of traces started in the window, per version, served and requested name. */
export async function tokensByModel(db: Queryable, tenantId: string, w: Window): Promise<ModelTokens[]> {
  const rows = await db.query<{
    model_version: string | null;
    model_served: string | null;
    model_requested: string | null;
    prompt: number;
    completion: number;
  }>(
    `select s.model_version, s.model_served, s.model_requested,
            coalesce(sum(s.prompt_tokens), 0)::float8 as prompt, coalesce(sum(s.completion_tokens), 0)::float8 as completion
       from traces t join steps s on s.tenant_id = t.tenant_id and s.trace_id = t.id
      where t.tenant_id = $1 and t.started_at >= $2 and t.started_at < $3 and s.kind = 'llm'
      group by 1, 2, 3 order by 1, 2, 3`,
    [tenantId, ...range(w)],
  );
  return rows.map((r) => ({
    modelVersion: r.model_version,
    modelServed: r.model_served,
    modelRequested: r.model_requested,
    promptTokens: Number(r.prompt),
    completionTokens: Number(r.completion),
  }));
}

/** The ids of every pattern some dataset of the tenant draws on. */
export async function patternsWithDatasets(db: Queryable, tenantId: string): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    "select distinct unnest(pattern_ids) as id from datasets where tenant_id = $1",
    [tenantId],
  );
  return new Set(rows.map((r) => r.id));
}
