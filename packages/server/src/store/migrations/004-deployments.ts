/**
 * Release management: per-tenant gates and canary policy, frozen EvalSets handed to the validator, validation
 * reports, deployments (the gateway's routing state) and the live judgements a canary is decided on.
 */
export const deploymentsSchema = `
create table release_settings (
  tenant_id text primary key references tenants (id),
  gates jsonb not null default '{}',
  canary jsonb not null default '{}',
  updated_at timestamptz not null default now()
);

create table validation_eval_sets (
  tenant_id text not null references tenants (id),
  version text not null,
  rows jsonb not null,
  created_from jsonb not null default '{}',
  created_at timestamptz not null default now(),
  primary key (tenant_id, version)
);

create table validations (
  tenant_id text not null references tenants (id),
  id text not null,
  candidate_id text not null,
  baseline_id text not null,
  decision text not null check (decision in ('pass', 'fail')),
  eval_set_versions text[] not null,
  report jsonb not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index validations_by_candidate on validations (tenant_id, candidate_id, created_at);

create table deployments (
  tenant_id text not null references tenants (id),
  id text not null,
  candidate_id text not null,
  control_id text not null,
  status text not null check (status in ('canary', 'promoted', 'rolled_back')),
  stage integer not null default 0,
  share double precision not null,
  stage_started_at timestamptz not null default now(),
  policy jsonb not null,
  last_step jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create unique index one_canary_per_tenant on deployments (tenant_id) where status = 'canary';

create table deployment_observations (
  tenant_id text not null,
  deployment_id text not null,
  trace_id text not null,
  arm text not null check (arm in ('canary', 'control')),
  stage integer not null,
  status text not null check (status in ('failed', 'passed', 'unknown')),
  failure_class text,
  observed_at timestamptz not null default now(),
  primary key (tenant_id, deployment_id, trace_id),
  foreign key (tenant_id, deployment_id) references deployments (tenant_id, id)
);
create index deployment_observations_by_stage on deployment_observations (tenant_id, deployment_id, stage, arm);

-- the deployer looks up a canary's gateway traces by the deployment id the gateway wrote into their metadata
create index traces_by_deployment on traces (tenant_id, (metadata->>'deploymentId'), started_at)
  where (metadata->>'deploymentId') is not null;
`;
