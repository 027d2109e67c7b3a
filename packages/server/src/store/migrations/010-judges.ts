/**
 * Tenants' judges: each rubric version as it was set (cached judgements are keyed by version), and the model that
 * runs it, on an upstream the admin allowlisted (its key stays in the server's environment).
 */
export const judgesSchema = `
create table judge_rubrics (
  tenant_id text not null references tenants(id),
  version integer not null,
  rubric jsonb not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, version)
);
create table tenant_judges (
  tenant_id text primary key references tenants(id),
  upstream text not null,
  model text not null,
  calls_per_minute integer not null,
  tokens_per_minute integer not null,
  updated_at timestamptz not null default now()
);
`;
