import { type FailurePattern, NotFoundError } from "@arc/core";
import type { Queryable, Row } from "../store/database.ts";

/** Writes the patterns projection (what `GET /v1/patterns` reads) from the clusterer's view of them. */
export async function savePatterns(
  tx: Queryable,
  tenantId: string,
  patterns: FailurePattern[],
): Promise<void> {
  if (patterns.length === 0) return;
  const col = <T>(f: (p: FailurePattern) => T) => patterns.map(f);
  await tx.query(
    `insert into patterns (tenant_id, id, key, failure_class, path, signature, label, count, first_seen, last_seen,
                           counts_by_day, counts_by_model_version, counts_by_env, examples, top_terms)
     select $1, id, key, failure_class, path, signature, label, count, first_seen, last_seen, by_day::jsonb,
            by_version::jsonb, by_env::jsonb, examples::jsonb, array(select jsonb_array_elements_text(top_terms::jsonb))
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[],
                   $9::timestamptz[], $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
            as x(id, key, failure_class, path, signature, label, count, first_seen, last_seen, by_day, by_version,
                 by_env, examples, top_terms)
     on conflict (tenant_id, id) do update set
       label = excluded.label, count = excluded.count, first_seen = excluded.first_seen,
       last_seen = excluded.last_seen, counts_by_day = excluded.counts_by_day,
       counts_by_model_version = excluded.counts_by_model_version, counts_by_env = excluded.counts_by_env,
       examples = excluded.examples, top_terms = excluded.top_terms, updated_at = now()`,
    [
      tenantId,
      col((p) => p.id),
      col((p) => p.key),
      col((p) => p.class),
      col((p) => p.path ?? null),
      col((p) => p.signature ?? null),
      col((p) => p.label),
      col((p) => p.count),
      col((p) => (Number.isNaN(Date.parse(p.firstSeen)) ? null : p.firstSeen)),
      col((p) => (Number.isNaN(Date.parse(p.lastSeen)) ? null : p.lastSeen)),
      col((p) => JSON.stringify(p.countsByDay)),
      col((p) => JSON.stringify(p.countsByModelVersion)),
      col((p) => JSON.stringify(p.countsByEnv)),
      col((p) => JSON.stringify(p.examples)),
      col((p) => JSON.stringify(p.topTerms)),
    ],
  );
}

const iso = (v: unknown) => (v === null || v === undefined ? "" : new Date(v as string).toISOString());

function toPattern(tenantId: string, r: Row): FailurePattern {
  return {
    id: r.id as string,
    tenantId,
    key: r.key as string,
    class: r.failure_class as FailurePattern["class"],
    ...(r.path ? { path: r.path as string } : {}),
    ...(r.signature ? { signature: r.signature as string } : {}),
    label: r.label as string,
    count: r.count as number,
    firstSeen: iso(r.first_seen),
    lastSeen: iso(r.last_seen),
    countsByDay: r.counts_by_day as Record<string, number>,
    countsByModelVersion: r.counts_by_model_version as Record<string, number>,
    countsByEnv: r.counts_by_env as Record<string, number>,
    examples: r.examples as FailurePattern["examples"],
    topTerms: r.top_terms as string[],
  };
}

/** Filters of `GET /v1/patterns`. */
export interface PatternQuery {
  /** Only patterns with members answered by this model version. */
  modelVersion?: string;
  /** Only patterns of this failure class. */
  class?: string;
  /** At most this many, largest first (default 100). */
  limit?: number;
}

/** A tenant's patterns, largest first. */
export async function listPatterns(
  db: Queryable,
  tenantId: string,
  query: PatternQuery = {},
): Promise<FailurePattern[]> {
  const conditions = ["tenant_id = $1"];
  const params: unknown[] = [tenantId];
  if (query.modelVersion) {
    params.push(query.modelVersion);
    conditions.push(`counts_by_model_version ? $${params.length}`);
  }
  if (query.class) {
    params.push(query.class);
    conditions.push(`failure_class = $${params.length}`);
  }
  params.push(query.limit ?? 100);
  const rows = await db.query(
    `select * from patterns where ${conditions.join(" and ")} order by count desc, id limit $${params.length}`,
    params,
  );
  return rows.map((r) => toPattern(tenantId, r));
}

/** One pattern of a tenant; NotFoundError (404) when the tenant has no such pattern. */
export async function getPattern(db: Queryable, tenantId: string, id: string): Promise<FailurePattern> {
  const [row] = await db.query("select * from patterns where tenant_id = $1 and id = $2", [tenantId, id]);
  if (!row) throw new NotFoundError(`no pattern with id "${id}"`);
  return toPattern(tenantId, row);
}

/** Ids of a tenant's patterns that exist among `ids`. */
export async function existingPatternIds(
  db: Queryable,
  tenantId: string,
  ids: string[],
): Promise<Set<string>> {
  const rows = await db.query<{ id: string }>(
    "select id from patterns where tenant_id = $1 and id = any($2::text[])",
    [tenantId, ids],
  );
  return new Set(rows.map((r) => r.id));
}

/** The most recent member traces of a pattern (newest first), for a person drilling in. */
export async function recentMembers(
  db: Queryable,
  tenantId: string,
  patternId: string,
  limit: number,
): Promise<{ traceId: string; modelVersion: string | null; startedAt: string; status: string }[]> {
  const rows = await db.query<Row>(
    `select f.trace_id, f.model_version, f.started_at, coalesce(v.status, 'unknown') as status
       from failures f left join verdicts v on v.tenant_id = f.tenant_id and v.trace_id = f.trace_id
      where f.tenant_id = $1 and f.pattern_id = $2
      order by f.started_at desc, f.trace_id desc limit $3`,
    [tenantId, patternId, limit],
  );
  return rows.map((r) => ({
    traceId: r.trace_id as string,
    modelVersion: (r.model_version as string | null) ?? null,
    startedAt: iso(r.started_at),
    status: r.status as string,
  }));
}
