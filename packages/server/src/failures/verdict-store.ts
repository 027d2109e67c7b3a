import type { Judgement } from "@arc/core";
import type { Queryable, Row } from "../store/database.ts";

/** A trace's current verdict as stored: one row per trace, updated in place when the trace is judged again. */
export interface StoredVerdict {
  traceId: string;
  status: Judgement["status"];
  /** The primary failure's class; null unless failed. */
  failureClass: string | null;
  severity: string | null;
  /** The detector whose verdict is primary. */
  detectorId: string | null;
  /** The pattern the trace joined (on its first failed judgement); null if it never failed. */
  patternId: string | null;
  modelVersion: string | null;
  /** Every detector's verdict and the conclusion. */
  judgement: Judgement;
  /** 1 on the first judgement, +1 each time late steps or feedback made it judged again. */
  revision: number;
  firstJudgedAt: string;
  judgedAt: string;
}

/** A verdict to write. */
export interface NewVerdict {
  traceId: string;
  judgement: Judgement;
  patternId: string | null;
  modelVersion: string | null;
}

/** Writes verdicts, one row per trace: a new trace gets revision 1, a trace judged again replaces its row (revision + 1). */
export async function upsertVerdicts(tx: Queryable, tenantId: string, verdicts: NewVerdict[]): Promise<void> {
  if (verdicts.length === 0) return;
  const primary = verdicts.map((v) => v.judgement.primary);
  await tx.query(
    `insert into verdicts (tenant_id, trace_id, status, failure_class, severity, detector_id, pattern_id,
                           model_version, judgement)
     select $1, trace_id, status, failure_class, severity, detector_id, pattern_id, model_version, judgement::jsonb
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
            as x(trace_id, status, failure_class, severity, detector_id, pattern_id, model_version, judgement)
     on conflict (tenant_id, trace_id) do update set
       status = excluded.status, failure_class = excluded.failure_class, severity = excluded.severity,
       detector_id = excluded.detector_id, pattern_id = coalesce(excluded.pattern_id, verdicts.pattern_id),
       model_version = excluded.model_version, judgement = excluded.judgement,
       revision = verdicts.revision + 1, judged_at = now()`,
    [
      tenantId,
      verdicts.map((v) => v.traceId),
      verdicts.map((v) => v.judgement.status),
      primary.map((p) => p?.class ?? null),
      primary.map((p) => p?.severity ?? null),
      primary.map((p) => p?.detectorId ?? null),
      verdicts.map((v) => v.patternId),
      verdicts.map((v) => v.modelVersion),
      verdicts.map((v) => JSON.stringify(v.judgement)),
    ],
  );
}

function toVerdict(r: Row): StoredVerdict {
  return {
    traceId: r.trace_id as string,
    status: r.status as StoredVerdict["status"],
    failureClass: (r.failure_class as string | null) ?? null,
    severity: (r.severity as string | null) ?? null,
    detectorId: (r.detector_id as string | null) ?? null,
    patternId: (r.pattern_id as string | null) ?? null,
    modelVersion: (r.model_version as string | null) ?? null,
    judgement: r.judgement as Judgement,
    revision: r.revision as number,
    firstJudgedAt: new Date(r.first_judged_at as string).toISOString(),
    judgedAt: new Date(r.judged_at as string).toISOString(),
  };
}

/** The verdict of one trace of a tenant, or null while it has not been judged. */
export async function getVerdict(
  db: Queryable,
  tenantId: string,
  traceId: string,
): Promise<StoredVerdict | null> {
  const [row] = await db.query("select * from verdicts where tenant_id = $1 and trace_id = $2", [
    tenantId,
    traceId,
  ]);
  return row ? toVerdict(row) : null;
}

/** Verdicts of many traces of a tenant (those judged so far), by trace id. */
export async function getVerdicts(
  db: Queryable,
  tenantId: string,
  traceIds: string[],
): Promise<Map<string, StoredVerdict>> {
  const rows = await db.query("select * from verdicts where tenant_id = $1 and trace_id = any($2::text[])", [
    tenantId,
    traceIds,
  ]);
  return new Map(rows.map((r) => [r.trace_id as string, toVerdict(r)]));
}

/** How many of a tenant's traces are judged, by status. */
export async function verdictCounts(db: Queryable, tenantId: string): Promise<Record<string, number>> {
  const rows = await db.query<{ status: string; n: number }>(
    "select status, count(*)::int as n from verdicts where tenant_id = $1 group by status",
    [tenantId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}
