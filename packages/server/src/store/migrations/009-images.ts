/** Images that dataset rows reference by content hash (`arc-image:sha256:<hex>`), stored once per tenant. */
export const imagesSchema = `
create table images (
  tenant_id text not null references tenants (id),
  ref text not null,
  media_type text not null,
  data bytea not null,
  created_at timestamptz not null default now(),
  primary key (tenant_id, ref)
);
`;
