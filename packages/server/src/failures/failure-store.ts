import type { FailureRecord } from "@arc/core";
import type { Queryable } from "../store/database.ts";

/** The pattern each of these traces joined, for those that already joined one. */
export async function assignedPatterns(
  db: Queryable,
  tenantId: string,
  traceIds: string[],
): Promise<Map<string, string>> {
  const rows = await db.query<{ trace_id: string; pattern_id: string }>(
    "select trace_id, pattern_id from failures where tenant_id = $1 and trace_id = any($2::text[])",
    [tenantId, traceIds],
  );
  return new Map(rows.map((r) => [r.trace_id, r.pattern_id]));
}

/** Records that failures joined patterns (once per trace; the primary key refuses a second membership). */
export async function insertFailures(
  tx: Queryable,
  tenantId: string,
  rows: { failure: FailureRecord; patternId: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `insert into failures (tenant_id, trace_id, pattern_id, failure_class, model_version, env, started_at)
     select $1, trace_id, pattern_id, failure_class, model_version, env, started_at
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
            as x(trace_id, pattern_id, failure_class, model_version, env, started_at)`,
    [
      tenantId,
      rows.map((r) => r.failure.traceId),
      rows.map((r) => r.patternId),
      rows.map((r) => r.failure.class),
      rows.map((r) => r.failure.modelVersion ?? null),
      rows.map((r) => r.failure.env ?? null),
      rows.map((r) => r.failure.at),
    ],
  );
}

/** A pattern's member whose current verdict is still `failed` (what datasets are made of). */
export interface FailureMember {
  traceId: string;
  patternId: string;
}

/**
 * Members of the given patterns (or of every pattern) whose current verdict is still `failed`, in trace id order,
 * at most `perPattern` per pattern (the first by trace id, so the choice is deterministic).
 */
export async function currentFailureMembers(
  db: Queryable,
  tenantId: string,
  patternIds: string[] | "all",
  perPattern: number,
): Promise<FailureMember[]> {
  const rows = await db.query<{ trace_id: string; pattern_id: string }>(
    `select trace_id, pattern_id from (
       select f.trace_id, f.pattern_id,
              row_number() over (partition by f.pattern_id order by f.trace_id) as n
         from failures f
         join verdicts v on v.tenant_id = f.tenant_id and v.trace_id = f.trace_id and v.status = 'failed'
        where f.tenant_id = $1 and ($2::text[] is null or f.pattern_id = any($2::text[]))) x
      where n <= $3
      order by pattern_id, trace_id`,
    [tenantId, patternIds === "all" ? null : patternIds, perPattern],
  );
  return rows.map((r) => ({ traceId: r.trace_id, patternId: r.pattern_id }));
}
