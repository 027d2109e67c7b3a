import type { ArmCounts } from "@arc/core";
import type { Database, Queryable } from "../store/database.ts";
import { getTrace } from "../store/trace-store.ts";
import type { Deployment } from "./deployment-store.ts";
import type { VerdictSource } from "./verdict-source.ts";

/**
 * Judges the gateway traces of a deployment not observed yet (at most `limit`), and stores one observation per trace
 * with the arm and stage it was served at; a trace whose verdict is not ready waits for a later call. Idempotent: a
 * trace is observed once, even after a restart. Returns how many were observed.
 */
export async function observeDeploymentTraces(
  db: Database,
  deployment: Deployment,
  verdicts: VerdictSource,
  limit = 500,
): Promise<number> {
  const ids = await db.query<{ id: string }>(
    `select t.id from traces t
     where t.tenant_id = $1 and t.metadata->>'deploymentId' = $2 and t.metadata->>'arm' in ('canary', 'control')
       and not exists (select 1 from deployment_observations o
                       where o.tenant_id = t.tenant_id and o.deployment_id = $2 and o.trace_id = t.id)
     order by t.started_at limit $3`,
    [deployment.tenantId, deployment.id, limit],
  );
  if (ids.length === 0) return 0;
  const traces = await Promise.all(ids.map((r) => getTrace(db, deployment.tenantId, r.id)));
  const verdictsNow = await verdicts.judge(deployment.tenantId, traces);
  const ready = traces.flatMap((t, i) => {
    const v = verdictsNow[i];
    return v ? [{ trace: t, verdict: v, meta: t.metadata as { arm: string; stage?: number } }] : [];
  });
  if (ready.length === 0) return 0;
  await db.query(
    `insert into deployment_observations (tenant_id, deployment_id, trace_id, arm, stage, status, failure_class)
     select $1, $2, trace_id, arm, stage, status, failure_class
     from unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::text[]) as x(trace_id, arm, stage, status, failure_class)
     on conflict do nothing`,
    [
      deployment.tenantId,
      deployment.id,
      ready.map((r) => r.trace.id),
      ready.map((r) => r.meta.arm),
      ready.map((r) => Number(r.meta.stage ?? 0)),
      ready.map((r) => r.verdict.status),
      ready.map((r) => r.verdict.failureClass ?? null),
    ],
  );
  return ready.length;
}

/** Judged (not `unknown`) requests and failures per arm at one stage of a deployment. */
export async function stageCounts(
  db: Queryable,
  deployment: Pick<Deployment, "tenantId" | "id">,
  stage: number,
): Promise<{ canary: ArmCounts; control: ArmCounts }> {
  const rows = await db.query<{ arm: string; n: number; failures: number }>(
    `select arm, count(*)::int as n, (count(*) filter (where status = 'failed'))::int as failures
     from deployment_observations
     where tenant_id = $1 and deployment_id = $2 and stage = $3 and status <> 'unknown' group by arm`,
    [deployment.tenantId, deployment.id, stage],
  );
  const arm = (name: string): ArmCounts => {
    const r = rows.find((x) => x.arm === name);
    return { n: Number(r?.n ?? 0), failures: Number(r?.failures ?? 0) };
  };
  return { canary: arm("canary"), control: arm("control") };
}

/** Failure rate per model version over a deployment's observations (all stages), for status and reports. */
export async function deploymentFailureRates(
  db: Queryable,
  deployment: Pick<Deployment, "tenantId" | "id">,
): Promise<{ arm: string; stage: number; n: number; failures: number }[]> {
  const rows = await db.query<{ arm: string; stage: number; n: number; failures: number }>(
    `select arm, stage, count(*)::int as n, (count(*) filter (where status = 'failed'))::int as failures
     from deployment_observations where tenant_id = $1 and deployment_id = $2 and status <> 'unknown'
     group by arm, stage order by stage, arm`,
    [deployment.tenantId, deployment.id],
  );
  return rows.map((r) => ({
    arm: r.arm,
    stage: Number(r.stage),
    n: Number(r.n),
    failures: Number(r.failures),
  }));
}
