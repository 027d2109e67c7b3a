import type { Queryable } from "../store/database.ts";

/** Judged gateway traffic of one model version in one time bucket. */
export interface RatePoint {
  modelVersion: string;
  /** Start of the bucket, seconds since `since`. */
  t: number;
  n: number;
  failures: number;
}

/** Judged gateway traffic of one model version in total. */
export interface VersionRate {
  modelVersion: string;
  n: number;
  failures: number;
  failureRate: number;
}

/** Failures of one pattern among one model version's judged gateway traffic. */
export interface PatternIncidence {
  patternId: string;
  modelVersion: string;
  failures: number;
}

/**
 * Only gateway-recorded traffic counts (its traces carry the model version that answered).
 *
 * Judged (passed or failed) gateway traffic per model version since `since`, in buckets of `bucketS` seconds by the
 * time each call started: the live failure rate of each version, read from the failure pipeline's verdicts.
 */
export async function failureRatesOverTime(
  db: Queryable,
  tenantId: string,
  since: Date,
  bucketS: number,
): Promise<RatePoint[]> {
  const rows = await db.query<{ model_version: string; b: number; n: number; failures: number }>(
    `select v.model_version, floor(extract(epoch from (t.started_at - $2::timestamptz)) / $3)::int as b,
            count(*)::int as n, (count(*) filter (where v.status = 'failed'))::int as failures
       from verdicts v join traces t on t.tenant_id = v.tenant_id and t.id = v.trace_id
      where v.tenant_id = $1 and t.started_at >= $2 and v.status <> 'unknown' and v.model_version is not null
        and t.metadata->>'source' = 'gateway'
      group by 1, 2 order by 2, 1`,
    [tenantId, since.toISOString(), bucketS],
  );
  return rows.map((r) => ({
    modelVersion: r.model_version,
    t: Number(r.b) * bucketS,
    n: Number(r.n),
    failures: Number(r.failures),
  }));
}

/** Judged gateway traffic per model version among calls started in [from, to) (to open-ended when omitted). */
export async function failureRatesBetween(
  db: Queryable,
  tenantId: string,
  from: Date,
  to?: Date,
): Promise<VersionRate[]> {
  const rows = await db.query<{ model_version: string; n: number; failures: number }>(
    `select v.model_version, count(*)::int as n, (count(*) filter (where v.status = 'failed'))::int as failures
       from verdicts v join traces t on t.tenant_id = v.tenant_id and t.id = v.trace_id
      where v.tenant_id = $1 and t.started_at >= $2 and ($3::timestamptz is null or t.started_at < $3)
        and v.status <> 'unknown' and v.model_version is not null and t.metadata->>'source' = 'gateway'
      group by 1 order by 1`,
    [tenantId, from.toISOString(), to?.toISOString() ?? null],
  );
  return rows.map((r) => ({
    modelVersion: r.model_version,
    n: Number(r.n),
    failures: Number(r.failures),
    failureRate: Number(r.n) > 0 ? Number(r.failures) / Number(r.n) : 0,
  }));
}

/** Failures per pattern and model version among current failed verdicts (a pattern's live incidence per version). */
export async function patternIncidence(db: Queryable, tenantId: string): Promise<PatternIncidence[]> {
  const rows = await db.query<{ pattern_id: string; model_version: string; failures: number }>(
    `select f.pattern_id, v.model_version, count(*)::int as failures
       from failures f join verdicts v on v.tenant_id = f.tenant_id and v.trace_id = f.trace_id
       join traces t on t.tenant_id = f.tenant_id and t.id = f.trace_id
      where f.tenant_id = $1 and v.status = 'failed' and v.model_version is not null
        and t.metadata->>'source' = 'gateway'
      group by 1, 2 order by 1, 2`,
    [tenantId],
  );
  return rows.map((r) => ({
    patternId: r.pattern_id,
    modelVersion: r.model_version,
    failures: Number(r.failures),
  }));
}

/** All traffic of one model version in one time bucket: traces, how many were judged, how many failed. */
export interface TrafficPoint {
  /** The version that answered (from the trace's verdict); `unversioned` when no verdict names one yet. */
  modelVersion: string;
  /** Start of the bucket, seconds since `since`. */
  t: number;
  traces: number;
  judged: number;
  failures: number;
}

/**
 * Every trace started since `since` (gateway-recorded or ingested), in buckets of `bucketS` seconds, by the model
 * version its verdict records: the tenant's traffic and failure rate over time.
 */
export async function trafficOverTime(
  db: Queryable,
  tenantId: string,
  since: Date,
  bucketS: number,
): Promise<TrafficPoint[]> {
  const rows = await db.query<{
    model_version: string;
    b: number;
    traces: number;
    judged: number;
    failures: number;
  }>(
    `select coalesce(v.model_version, 'unversioned') as model_version,
            floor(extract(epoch from (t.started_at - $2::timestamptz)) / $3)::int as b, count(*)::int as traces,
            (count(*) filter (where v.status in ('passed', 'failed')))::int as judged,
            (count(*) filter (where v.status = 'failed'))::int as failures
       from traces t left join verdicts v on v.tenant_id = t.tenant_id and v.trace_id = t.id
      where t.tenant_id = $1 and t.started_at >= $2
      group by 1, 2 order by 2, 1`,
    [tenantId, since.toISOString(), bucketS],
  );
  return rows.map((r) => ({
    modelVersion: r.model_version,
    t: Number(r.b) * bucketS,
    traces: Number(r.traces),
    judged: Number(r.judged),
    failures: Number(r.failures),
  }));
}
