/**
 * A judge's scheduled re-calibration, one row per tenant: the change it answers (a new rubric version, another model,
 * tools the traffic offers beyond the calibrated ones), when it is next due, how many times it ran for that change,
 * and how its last run ended. Servers sharing a database claim a due row with a lease, so one of them runs it.
 */
export const judgeRecalibrationsSchema = `
create table judge_recalibrations (
  tenant_id text primary key references tenants(id),
  why text not null,
  status text not null check (status in ('scheduled', 'running', 'trusted', 'untrusted', 'error')),
  attempts int not null default 0,
  next_at timestamptz not null,
  claimed_until timestamptz,
  outcome text,
  updated_at timestamptz not null default now()
);
`;
