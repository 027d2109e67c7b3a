/**
 * What a judge's trust rests on: the tools each calibration's traces were offered (a tool the traffic offers beyond
 * them makes the judge untrusted), people's annotations of traces and steps (a label and a rationale: the gold set
 * calibration reads), and review queues of traces waiting for one.
 */
export const judgeGoldSetSchema = `
alter table judge_calibrations add column tools text[];
create table annotations (
  tenant_id text not null references tenants(id),
  id text not null,
  trace_id text not null,
  step_id text,
  label text not null check (label in ('pass', 'fail')),
  failure_class text,
  rationale text not null,
  author text not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index annotations_by_trace on annotations (tenant_id, trace_id, created_at desc);
create table review_items (
  tenant_id text not null references tenants(id),
  queue text not null,
  trace_id text not null,
  reason text not null,
  added_at timestamptz not null default now(),
  primary key (tenant_id, queue, trace_id),
  foreign key (tenant_id, trace_id) references traces (tenant_id, id)
);
create index review_items_by_age on review_items (tenant_id, queue, added_at, trace_id);
`;
