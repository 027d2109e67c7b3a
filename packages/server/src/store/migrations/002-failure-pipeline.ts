/**
 * The failure pipeline: a detection queue filled by triggers in the ingest transaction (so ingest never waits for
 * detection), one verdict per trace, pattern membership, each tenant's clusterer state and its patterns projection,
 * detector settings, immutable content-addressed datasets with lineage, and synthesis schedules.
 */
export const failurePipelineSchema = `
create sequence detection_queue_seq;

create table detection_queue (
  tenant_id text not null,
  trace_id text not null,
  reason text not null check (reason in ('ingest', 'feedback', 'rejudge')),
  enqueued_at timestamptz not null default now(),
  seq bigint not null default nextval('detection_queue_seq'),
  lease_until timestamptz,
  attempts integer not null default 0,
  last_error text,
  primary key (tenant_id, trace_id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index detection_queue_by_arrival on detection_queue (enqueued_at);

create function enqueue_detection() returns trigger language plpgsql as $$
begin
  if tg_table_name = 'traces' then
    insert into detection_queue (tenant_id, trace_id, reason)
    select tenant_id, id, 'ingest' from (select distinct tenant_id, id from new_rows) x
    on conflict (tenant_id, trace_id) do update
      set enqueued_at = now(), seq = nextval('detection_queue_seq'), reason = excluded.reason;
  else
    insert into detection_queue (tenant_id, trace_id, reason)
    select tenant_id, trace_id, tg_argv[0] from (select distinct tenant_id, trace_id from new_rows) x
    on conflict (tenant_id, trace_id) do update
      set enqueued_at = now(), seq = nextval('detection_queue_seq'), reason = excluded.reason;
  end if;
  return null;
end $$;
create trigger traces_enqueue_detection after insert on traces
  referencing new table as new_rows for each statement execute function enqueue_detection('ingest');
create trigger steps_enqueue_detection after insert on steps
  referencing new table as new_rows for each statement execute function enqueue_detection('ingest');
create trigger feedback_enqueue_detection after insert on feedback
  referencing new table as new_rows for each statement execute function enqueue_detection('feedback');

create table verdicts (
  tenant_id text not null,
  trace_id text not null,
  status text not null check (status in ('failed', 'passed', 'unknown')),
  failure_class text,
  severity text,
  detector_id text,
  pattern_id text,
  model_version text,
  judgement jsonb not null,
  revision integer not null default 1,
  first_judged_at timestamptz not null default now(),
  judged_at timestamptz not null default now(),
  primary key (tenant_id, trace_id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index verdicts_by_status on verdicts (tenant_id, status, failure_class);

create table failures (
  tenant_id text not null,
  trace_id text not null,
  pattern_id text not null,
  failure_class text not null,
  model_version text,
  env text,
  started_at timestamptz,
  assigned_at timestamptz not null default now(),
  primary key (tenant_id, trace_id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index failures_by_pattern on failures (tenant_id, pattern_id, trace_id);

create table cluster_states (
  tenant_id text primary key references tenants (id),
  state jsonb,
  version bigint not null default 0,
  updated_at timestamptz not null default now()
);

create table patterns (
  tenant_id text not null references tenants (id),
  id text not null,
  key text not null,
  failure_class text not null,
  path text,
  signature text,
  label text not null,
  count integer not null,
  first_seen timestamptz,
  last_seen timestamptz,
  counts_by_day jsonb not null,
  counts_by_model_version jsonb not null,
  counts_by_env jsonb not null,
  examples jsonb not null,
  top_terms text[] not null default '{}',
  updated_at timestamptz not null default now(),
  primary key (tenant_id, id)
);
create index patterns_by_count on patterns (tenant_id, count desc, id);

create table detector_configs (
  tenant_id text primary key references tenants (id),
  config jsonb not null,
  updated_at timestamptz not null default now()
);

create table datasets (
  tenant_id text not null references tenants (id),
  id text not null,
  kind text not null check (kind in ('eval', 'prompts', 'preferences')),
  version text not null,
  seed bigint not null,
  pattern_ids text[] not null,
  source_trace_ids text[] not null,
  params jsonb not null,
  stats jsonb not null,
  row_count integer not null,
  rows jsonb not null,
  created_by text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, version)
);
create index datasets_by_time on datasets (tenant_id, created_at desc, id);

create function datasets_are_immutable() returns trigger language plpgsql as $$
begin
  raise exception 'datasets are immutable: % is not allowed; create a new dataset instead', tg_op;
end $$;
create trigger datasets_immutable before update or delete on datasets
  for each row execute function datasets_are_immutable();

create table dataset_schedules (
  tenant_id text not null references tenants (id),
  name text not null,
  every_ms bigint not null check (every_ms >= 1000),
  request jsonb not null,
  next_run_at timestamptz not null,
  last_run_at timestamptz,
  last_dataset_id text,
  last_error text,
  primary key (tenant_id, name)
);
create index dataset_schedules_due on dataset_schedules (next_run_at);
`;
