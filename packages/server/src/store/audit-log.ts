import type { Queryable } from "./database.ts";

/** One recorded state change: who or what did it, to what, and on what evidence. */
export interface AuditEntry {
  /** Position in the log, increasing: the order entries were written in. */
  seq: number;
  /** The tenant whose record changed. */
  tenantId: string;
  /** ISO 8601 date-time of the change. */
  at: string;
  /** `user:<key id>`, `system:<worker>`, `cli`... */
  actor: string;
  /** `model_version`, `deployment`, `pattern`... */
  subjectKind: string;
  /** Id of the record that changed. */
  subjectId: string;
  /** What was done, e.g. `register`, `promote`, `rollback`, `switch_off`. */
  action: string;
  /** State before the change; null for a creation. */
  fromState: string | null;
  /** State after the change; null for a deletion. */
  toState: string | null;
  /** The figures or inputs the change was decided on (validation result, SPRT statistics...). */
  evidence: Record<string, unknown>;
}

/** An audit entry as written: the log assigns `seq` and `at`. */
export type NewAuditEntry = Omit<AuditEntry, "seq" | "at">;

/** Appends to the audit log (rows can never be changed or removed: a trigger refuses it). */
export async function appendAudit(db: Queryable, entry: NewAuditEntry): Promise<number> {
  const rows = await db.query<{ seq: string }>(
    `insert into audit_log (tenant_id, actor, subject_kind, subject_id, action, from_state, to_state, evidence)
     values ($1, $2, $3, $4, $5, $6, $7, $8) returning seq`,
    [
      entry.tenantId,
      entry.actor,
      entry.subjectKind,
      entry.subjectId,
      entry.action,
      entry.fromState,
      entry.toState,
      JSON.stringify(entry.evidence),
    ],
  );
  return Number(rows[0].seq);
}

/** A tenant's audit entries, oldest first, optionally for one subject. */
export async function listAudit(
  db: Queryable,
  tenantId: string,
  subject?: { kind: string; id: string },
): Promise<AuditEntry[]> {
  const rows = await db.query<Record<string, unknown>>(
    `select * from audit_log where tenant_id = $1
       and ($2::text is null or (subject_kind = $2 and subject_id = $3)) order by seq`,
    [tenantId, subject?.kind ?? null, subject?.id ?? null],
  );
  return rows.map((r) => ({
    seq: Number(r.seq),
    tenantId: r.tenant_id as string,
    at: new Date(r.at as string).toISOString(),
    actor: r.actor as string,
    subjectKind: r.subject_kind as string,
    subjectId: r.subject_id as string,
    action: r.action as string,
    fromState: (r.from_state as string | null) ?? null,
    toState: (r.to_state as string | null) ?? null,
    evidence: r.evidence as Record<string, unknown>,
  }));
}
