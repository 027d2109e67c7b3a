/**
 * Task families a tenant registered as data (a JsonFamilySpec: tools and argument checks, or judge only). The spec
 * is `json`, not `jsonb`, so its schemas keep their property order: a reference call's arguments follow it.
 */
export const taskFamiliesSchema = `
create table task_families (
  tenant_id text not null references tenants(id),
  env text not null,
  spec json not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  primary key (tenant_id, env)
);
`;
