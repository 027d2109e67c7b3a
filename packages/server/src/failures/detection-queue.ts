import type { Database, Queryable } from "../store/database.ts";

/** A trace a worker has claimed for judging, with the queue version it saw. */
export interface DetectionClaim {
  tenantId: string;
  traceId: string;
  /** The queue row's version when claimed: a later arrival bumps it, and the trace is judged again. */
  seq: string;
  /** What queued it: `ingest` (new trace or steps), `feedback`, or `rejudge`. */
  reason: string;
  /** Claims so far, this one included. */
  attempts: number;
  /** The error of the previous attempt, if it failed. */
  lastError: string | null;
  /** The previous claim ran out its lease unfinished: its worker stopped or hung while judging it. */
  abandoned: boolean;
}

/**
 * Whether a trace is due for judging (quiet for `quietMs`, not leased, not a dead letter): a read that costs a
 * fraction of a claim, so an idle worker looks without writing.
 */
export async function hasDueTraces(db: Queryable, quietMs: number): Promise<boolean> {
  const rows = await db.query<{ due: boolean }>(
    `select exists (
       select 1 from detection_queue
        where enqueued_at <= now() - $1::float8 * interval '1 millisecond' and dead_lettered_at is null
          and (lease_until is null or lease_until < now())
     ) as due`,
    [quietMs],
  );
  return rows[0].due;
}

/**
 * Claims up to `limit` traces that have been quiet for `quietMs` and are not leased by another worker, leasing them
 * for `leaseMs`. One statement with `FOR UPDATE SKIP LOCKED`, so workers in several processes sharing a PostgreSQL
 * server never claim the same trace. A claim whose worker died is claimed again when its lease runs out, alone: if
 * that trace is what stops its worker, the traces claimed with it are not held back with it. Dead letters are never
 * claimed.
 */
export async function claimDueTraces(
  db: Queryable,
  options: { quietMs: number; limit: number; leaseMs: number },
): Promise<DetectionClaim[]> {
  const rows = await db.query<{
    tenant_id: string;
    trace_id: string;
    seq: string;
    reason: string;
    attempts: number;
    last_error: string | null;
    abandoned: boolean;
  }>(
    `with abandoned as (
       select tenant_id, trace_id from detection_queue
        where enqueued_at <= now() - $1::float8 * interval '1 millisecond' and dead_lettered_at is null
          and lease_until < now()
        order by enqueued_at, seq
        limit 1
        for update skip locked
     ), fresh as (
       select tenant_id, trace_id from detection_queue
        where enqueued_at <= now() - $1::float8 * interval '1 millisecond' and dead_lettered_at is null
          and lease_until is null and not exists (select 1 from abandoned)
        order by enqueued_at, seq
        limit $2
        for update skip locked
     ), due as (
       select tenant_id, trace_id, true as abandoned from abandoned
       union all
       select tenant_id, trace_id, false from fresh
     )
     update detection_queue q
        set lease_until = now() + $3::float8 * interval '1 millisecond', attempts = q.attempts + 1
       from due
      where q.tenant_id = due.tenant_id and q.trace_id = due.trace_id
      returning q.tenant_id, q.trace_id, q.seq::text as seq, q.reason, q.attempts, q.last_error, due.abandoned`,
    [options.quietMs, options.limit, options.leaseMs],
  );
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    traceId: r.trace_id,
    seq: r.seq,
    reason: r.reason,
    attempts: r.attempts,
    lastError: r.last_error,
    abandoned: r.abandoned,
  }));
}

/**
 * Removes judged traces from the queue, in the transaction that stored their verdicts. A trace that arrived again
 * while it was being judged (its version moved on) stays queued, its lease lifted, so it is judged once more.
 */
export async function completeClaims(
  tx: Queryable,
  tenantId: string,
  claims: DetectionClaim[],
): Promise<void> {
  if (claims.length === 0) return;
  const ids = claims.map((c) => c.traceId);
  const seqs = claims.map((c) => c.seq);
  await tx.query(
    `delete from detection_queue q using unnest($2::text[], $3::bigint[]) as c(trace_id, seq)
      where q.tenant_id = $1 and q.trace_id = c.trace_id and q.seq = c.seq`,
    [tenantId, ids, seqs],
  );
  await tx.query(
    `update detection_queue q set lease_until = null, attempts = 0, last_error = null
       from unnest($2::text[]) as c(trace_id)
      where q.tenant_id = $1 and q.trace_id = c.trace_id`,
    [tenantId, ids],
  );
}

/** Gives claims back after a failed attempt, with the error, so the next poll tries again. */
/**
 * Queues traces to be judged again after `delayMs` to twice that, each at its own drawn time, so traces the judge
 * could not take together come back spread out, never as one flood (reason `rejudge`); a trace queued meanwhile
 * (new steps, feedback) keeps its own place.
 */
export async function requeueLater(
  db: Queryable,
  tenantId: string,
  traceIds: string[],
  delayMs: number,
): Promise<void> {
  if (traceIds.length === 0) return;
  await db.query(
    `insert into detection_queue (tenant_id, trace_id, reason, enqueued_at)
     select $1, t, 'rejudge', now() + $3::float8 * (1 + random()) * interval '1 millisecond'
       from unnest($2::text[]) as t
     on conflict (tenant_id, trace_id) do nothing`,
    [tenantId, traceIds, delayMs],
  );
}

export async function releaseClaims(db: Database, claims: DetectionClaim[], error: string): Promise<void> {
  if (claims.length === 0) return;
  await db.query(
    `update detection_queue q set lease_until = null, last_error = $3
       from unnest($1::text[], $2::text[]) as c(tenant_id, trace_id)
      where q.tenant_id = c.tenant_id and q.trace_id = c.trace_id`,
    [claims.map((c) => c.tenantId), claims.map((c) => c.traceId), error.slice(0, 2000)],
  );
}

/**
 * Moves claims aside for good, with the error that broke them: dead letters are not claimed again, arrivals for
 * them do not requeue them, and `deadLetteredDetections` lists them.
 */
export async function deadLetterClaims(
  db: Queryable,
  claims: DetectionClaim[],
  error: string,
): Promise<void> {
  if (claims.length === 0) return;
  await db.query(
    `update detection_queue q set lease_until = null, last_error = $3, dead_lettered_at = now()
       from unnest($1::text[], $2::text[]) as c(tenant_id, trace_id)
      where q.tenant_id = c.tenant_id and q.trace_id = c.trace_id`,
    [claims.map((c) => c.tenantId), claims.map((c) => c.traceId), error.slice(0, 2000)],
  );
}

/** A trace moved aside by the detection worker, with why. */
export interface DeadLetteredDetection {
  traceId: string;
  /** The error that broke its judging the last time. */
  error: string;
  /** How many times it was claimed. */
  attempts: number;
  /** ISO 8601 date-time it was moved aside. */
  deadLetteredAt: string;
}

/** A tenant's dead letters, oldest first, at most `limit`. */
export async function deadLetteredDetections(
  db: Queryable,
  tenantId: string,
  limit = 500,
): Promise<DeadLetteredDetection[]> {
  const rows = await db.query<{
    trace_id: string;
    last_error: string;
    attempts: number;
    dead_lettered_at: string;
  }>(
    `select trace_id, last_error, attempts, dead_lettered_at from detection_queue
      where tenant_id = $1 and dead_lettered_at is not null order by dead_lettered_at, trace_id limit $2`,
    [tenantId, limit],
  );
  return rows.map((r) => ({
    traceId: r.trace_id,
    error: r.last_error,
    attempts: r.attempts,
    deadLetteredAt: new Date(r.dead_lettered_at).toISOString(),
  }));
}

/** How many of a tenant's traces are dead letters. */
export async function countDeadLetteredDetections(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from detection_queue where tenant_id = $1 and dead_lettered_at is not null",
    [tenantId],
  );
  return row.n;
}

/** Traces waiting to be judged per tenant that has any (leased ones included, dead letters not). */
export async function pendingDetectionsByTenant(
  db: Queryable,
): Promise<{ tenantId: string; pending: number }[]> {
  const rows = await db.query<{ tenant_id: string; n: number }>(
    "select tenant_id, count(*)::int as n from detection_queue where dead_lettered_at is null group by tenant_id",
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, pending: Number(r.n) }));
}

/** Traces of a tenant waiting to be judged (leased ones included, dead letters not). */
export async function pendingDetections(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from detection_queue where tenant_id = $1 and dead_lettered_at is null",
    [tenantId],
  );
  return row.n;
}
