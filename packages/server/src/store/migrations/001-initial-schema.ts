/** Tenants, keys, traces and their steps, content-addressed bodies, feedback and settings. */
export const initialSchema = `
create table tenants (
  id text primary key,
  name text not null unique,
  created_at timestamptz not null default now()
);

create table api_keys (
  id text primary key,
  tenant_id text references tenants (id),
  role text not null check (role in ('admin', 'tenant')),
  name text not null default '',
  key_prefix text not null,
  key_hash text not null unique,
  created_at timestamptz not null default now(),
  revoked_at timestamptz,
  check ((role = 'admin') = (tenant_id is null))
);

create table blobs (
  tenant_id text not null references tenants (id),
  hash text not null,
  body jsonb not null,
  primary key (tenant_id, hash)
);

create table traces (
  tenant_id text not null references tenants (id),
  id text not null,
  name text,
  started_at timestamptz not null,
  ended_at timestamptz,
  user_id text,
  session_id text,
  env text,
  status text not null default 'unknown',
  input jsonb,
  output jsonb,
  tags text[] not null default '{}',
  metadata jsonb,
  models text[] not null default '{}',
  search_text text not null default '',
  ingested_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index traces_by_time on traces (tenant_id, started_at desc, id desc);

create table steps (
  tenant_id text not null,
  trace_id text not null,
  id text not null,
  parent_id text,
  kind text not null,
  name text,
  started_at timestamptz not null,
  ended_at timestamptz,
  latency_ms double precision,
  model_requested text,
  model_served text,
  model_version text,
  finish_reason text,
  prompt_tokens integer,
  completion_tokens integer,
  total_tokens integer,
  messages_hash text,
  tools_hash text,
  params jsonb,
  input jsonb,
  output jsonb,
  error jsonb,
  metadata jsonb,
  ingested_at timestamptz not null default now(),
  primary key (tenant_id, trace_id, id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index steps_by_model on steps (tenant_id, model_served);

create table feedback (
  tenant_id text not null,
  id text not null,
  trace_id text not null,
  step_id text,
  score double precision,
  label text,
  correction text,
  comment text,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index feedback_by_trace on feedback (tenant_id, trace_id);

create table settings (
  key text primary key,
  value jsonb not null
);
`;
