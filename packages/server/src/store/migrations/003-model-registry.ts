/**
 * The model registry (every checkpoint a run publishes, and every upstream model a tenant serves) and the
 * append-only audit log of every state change. 002 is the failure pipeline's; 004 the deployer's.
 */
export const modelRegistrySchema = `
create table model_versions (
  tenant_id text not null references tenants (id),
  id text not null,
  name text not null,
  status text not null check (status in ('candidate', 'validated', 'rejected', 'approved', 'canary', 'promoted',
                                         'rolled_back', 'retired')),
  parent_id text,
  artifact_dir text,
  upstream jsonb,
  lineage jsonb not null default '{}',
  metrics jsonb not null default '{}',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, name),
  check (artifact_dir is not null or upstream is not null)
);
create index model_versions_by_status on model_versions (tenant_id, status);

create table audit_log (
  seq bigserial primary key,
  tenant_id text not null references tenants (id),
  at timestamptz not null default now(),
  actor text not null,
  subject_kind text not null,
  subject_id text not null,
  action text not null,
  from_state text,
  to_state text,
  evidence jsonb not null default '{}'
);
create index audit_log_by_subject on audit_log (tenant_id, subject_kind, subject_id, seq);

create function audit_log_is_append_only() returns trigger language plpgsql as $$
begin
  raise exception 'audit_log is append-only: % is not allowed', tg_op;
end $$;
create trigger audit_log_append_only before update or delete on audit_log
  for each row execute function audit_log_is_append_only();
`;
