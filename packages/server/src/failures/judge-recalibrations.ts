import { calibrateJudge } from "../judges/calibrate-judge.ts";
import { judgeTrust } from "../judges/judge-trust.ts";
import { type JudgeUpstreams, usableJudge } from "../judges/tenant-judge.ts";
import { appendAudit } from "../store/audit-log.ts";
import type { Queryable } from "../store/database.ts";
import type { RegistrySetup } from "./failure-pipeline-config.ts";
import { tenantRegistry } from "./tenant-registry.ts";

/** How scheduled re-calibrations run; every field has a default. */
export interface RecalibrationSchedule {
  /** How long a change waits before its re-calibration (default 60 s): edits made in a row are calibrated once. */
  settleMs: number;
  /** The wait after a run that left the change uncalibrated, doubled for each next run, at most a day (default 10 min). */
  retryMs: number;
  /** Recent traces a re-calibration reads (default 100, as `POST /v1/judges/calibrate`). */
  traces: number;
  /** How long a claimed re-calibration may run before another server may take it over (default 30 min). */
  leaseMs: number;
}

const DEFAULT_SCHEDULE: RecalibrationSchedule = {
  settleMs: 60_000,
  retryMs: 600_000,
  traces: 100,
  leaseMs: 1_800_000,
};

/** The longest wait between two re-calibrations of the same change. */
const MAX_RETRY_MS = 86_400_000;

/** Who the audit log names for a scheduled re-calibration. */
const RECALIBRATION_ACTOR = "system:judge-recalibration";

/** A tenant's scheduled re-calibration: the change it answers, its state, and how its last run ended. */
export interface JudgeRecalibration {
  /** Why the judge was untrusted when it was scheduled (the trust's reason). */
  why: string;
  /** `scheduled` (due at `nextAt`), `running`, or how its last run left the judge: `trusted`, `untrusted`, `error`. */
  status: "scheduled" | "running" | "trusted" | "untrusted" | "error";
  /** Runs for this change so far. */
  attempts: number;
  nextAt: string;
  /** The trust after the last run (its basis or its reason), or the error that ended it. */
  outcome: string | null;
  updatedAt: string;
}

/** The tenant's re-calibration, if one was ever scheduled. */
export async function getRecalibration(
  db: Queryable,
  tenantId: string,
): Promise<JudgeRecalibration | undefined> {
  const [row] = await db.query<Record<string, unknown>>(
    "select why, status, attempts, next_at, outcome, updated_at from judge_recalibrations where tenant_id = $1",
    [tenantId],
  );
  return row
    ? {
        why: row.why as string,
        status: row.status as JudgeRecalibration["status"],
        attempts: Number(row.attempts),
        nextAt: new Date(row.next_at as string).toISOString(),
        outcome: (row.outcome as string | null) ?? null,
        updatedAt: new Date(row.updated_at as string).toISOString(),
      }
    : undefined;
}

/**
 * Schedules a re-calibration, `settleMs` from now, for each tenant whose calibrated judge has changed since (its
 * rubric, its model, its traffic's tools: `judgeTrust` names the change). A change already scheduled keeps its
 * schedule and its count of runs; a new one, or a change after the last run settled, starts afresh.
 */
async function scheduleChangedJudges(
  db: Queryable,
  upstreams: JudgeUpstreams,
  settleMs: number,
): Promise<void> {
  const tenants = await db.query<{ tenant_id: string }>(
    `select j.tenant_id from tenant_judges j
     where exists (select 1 from judge_calibrations c where c.tenant_id = j.tenant_id) order by j.tenant_id`,
  );
  for (const { tenant_id: tenantId } of tenants) {
    if (!(await usableJudge(db, tenantId, upstreams))) continue;
    const trust = await judgeTrust(db, tenantId);
    if (trust.trusted || !trust.change) continue;
    await db.query(
      `insert into judge_recalibrations (tenant_id, why, status, attempts, next_at)
       values ($1, $2, 'scheduled', 0, now() + $3::float8 * interval '1 millisecond')
       on conflict (tenant_id) do update set why = excluded.why, status = 'scheduled', attempts = 0,
         next_at = excluded.next_at, claimed_until = null, outcome = null, updated_at = now()
       where (judge_recalibrations.why <> excluded.why or judge_recalibrations.status in ('trusted', 'untrusted'))
         and (judge_recalibrations.status <> 'running' or judge_recalibrations.claimed_until < now())`,
      [tenantId, trust.reason, settleMs],
    );
  }
}

/** Claims the re-calibration due first (one whose lease ran out counts as due), for `leaseMs`. */
async function claimDueRecalibration(
  db: Queryable,
  leaseMs: number,
): Promise<{ tenantId: string; why: string; attempts: number } | undefined> {
  const [row] = await db.query<{ tenant_id: string; why: string; attempts: number }>(
    `update judge_recalibrations r set status = 'running', attempts = r.attempts + 1, updated_at = now(),
       claimed_until = now() + $1::float8 * interval '1 millisecond'
     from (select tenant_id from judge_recalibrations
           where (status in ('scheduled', 'error') and next_at <= now()) or (status = 'running' and claimed_until < now())
           order by next_at, tenant_id limit 1 for update skip locked) due
     where r.tenant_id = due.tenant_id
     returning r.tenant_id, r.why, r.attempts`,
    [leaseMs],
  );
  return row ? { tenantId: row.tenant_id, why: row.why, attempts: Number(row.attempts) } : undefined;
}

/** What one scheduled re-calibration did. */
export interface RecalibrationRun {
  tenantId: string;
  why: string;
  status: "scheduled" | "trusted" | "untrusted" | "error";
  outcome: string;
}

/**
 * Re-calibrates one claimed judge through its queue, then records how it ended: `trusted`; `untrusted` for another
 * reason than a change (its kappa, too few labels: a person's move, so nothing is scheduled); or the same change
 * still uncalibrated, or an error, scheduled again after a back-off that doubles with each run. Audited either way.
 */
async function recalibrate(
  db: Queryable,
  claim: { tenantId: string; why: string; attempts: number },
  deps: { upstreams: JudgeUpstreams; setupRegistry?: RegistrySetup },
  schedule: RecalibrationSchedule,
): Promise<RecalibrationRun> {
  const { tenantId, why, attempts } = claim;
  const retryMs = Math.min(schedule.retryMs * 2 ** (attempts - 1), MAX_RETRY_MS);
  let run: RecalibrationRun;
  let evidence: Record<string, unknown> = { why, attempt: attempts };
  let model = "judge";
  try {
    const labeller = await tenantRegistry(db, tenantId, deps.setupRegistry);
    const calibration = await calibrateJudge(db, tenantId, { ...deps, labeller }, schedule.traces);
    model = calibration.model;
    evidence = { ...evidence, rubricVersion: calibration.rubricVersion, model, ...calibration.report };
    const trust = await judgeTrust(db, tenantId);
    run = trust.trusted
      ? { tenantId, why, status: "trusted", outcome: trust.basis }
      : trust.change
        ? { tenantId, why, status: "scheduled", outcome: trust.reason }
        : { tenantId, why, status: "untrusted", outcome: trust.reason };
  } catch (error) {
    run = {
      tenantId,
      why,
      status: "error",
      outcome: `the re-calibration failed: ${(error as Error).message}`,
    };
  }
  await db.query(
    `update judge_recalibrations set status = $2, outcome = $3, claimed_until = null, updated_at = now(),
       next_at = now() + $4::float8 * interval '1 millisecond'
     where tenant_id = $1`,
    [tenantId, run.status, run.outcome, retryMs],
  );
  await appendAudit(db, {
    tenantId,
    actor: RECALIBRATION_ACTOR,
    subjectKind: "judge",
    subjectId: model,
    action: "recalibrate",
    fromState: "untrusted",
    toState: run.status === "trusted" ? "trusted" : "untrusted",
    evidence: { ...evidence, outcome: run.outcome },
  });
  return run;
}

/**
 * Re-calibrates judges whose rubric, model or traffic's tools changed since their calibration, by themselves and
 * bounded: a change is scheduled `settleMs` after it is seen, this process runs at most one re-calibration per call,
 * its judge calls go through the judge's queue like every other, and a change its run leaves uncalibrated (tools no
 * labelled trace was offered yet) is tried again after a doubling back-off. The judge stays untrusted until a run
 * passes its gate; `getRecalibration` and the audit log (`subject_kind` `judge`) say why and how each run ended.
 */
export async function runDueRecalibrations(
  db: Queryable,
  deps: { upstreams: JudgeUpstreams; setupRegistry?: RegistrySetup },
  options: Partial<RecalibrationSchedule> = {},
): Promise<RecalibrationRun[]> {
  const schedule = { ...DEFAULT_SCHEDULE, ...options };
  await scheduleChangedJudges(db, deps.upstreams, schedule.settleMs);
  const claim = await claimDueRecalibration(db, schedule.leaseMs);
  return claim ? [await recalibrate(db, claim, deps, schedule)] : [];
}
