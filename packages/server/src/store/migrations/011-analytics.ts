/**
 * Learning analytics: each tenant's prices per model and cost of a failure (what `GET /v1/analytics` turns tokens and
 * failures into money with), and each judge calibration's report, so a tenant and the dashboard see how well the
 * judge agrees with known labels.
 */
export const analyticsSchema = `
create table analytics_settings (
  tenant_id text primary key references tenants(id),
  prices jsonb not null default '{}',
  cost_per_failure double precision,
  updated_at timestamptz not null default now()
);
create table judge_calibrations (
  tenant_id text not null references tenants(id),
  at timestamptz not null default now(),
  rubric_version integer not null,
  model text not null,
  report jsonb not null,
  primary key (tenant_id, at)
);
`;
