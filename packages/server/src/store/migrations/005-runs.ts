/**
 * Training runs the server knows about (started by the orchestrator, `POST /v1/runs` or a caller of
 * `runImprovementCycle`): what they train from, where they stand, and the candidate they published. The run's own
 * files live in `<runsDir>/<id>/` (the RL package's layout); these rows mirror them for the API and for claims.
 */
export const runsSchema = `
create table runs (
  tenant_id text not null references tenants (id),
  id text not null,
  trigger text not null,
  recipe_path text not null,
  overrides jsonb not null default '[]',
  recipe_hash text,
  base_model_id text,
  datasets jsonb not null default '[]',
  patterns jsonb not null default '[]',
  source_trace_count integer not null default 0,
  status text not null check (status in ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
  cancel_requested boolean not null default false,
  step integer not null default 0,
  total_steps integer,
  metrics jsonb not null default '{}',
  candidate_id text,
  runs_dir text not null,
  owner text,
  attempts integer not null default 0,
  heartbeat_at timestamptz,
  created_at timestamptz not null default now(),
  started_at timestamptz,
  ended_at timestamptz,
  error text,
  primary key (tenant_id, id)
);
create index runs_by_status on runs (status, created_at);
create index runs_by_tenant on runs (tenant_id, created_at desc);
`;
