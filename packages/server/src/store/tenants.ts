import { randomBytes } from "node:crypto";
import { InvalidInputError } from "@arc/core";
import type { Queryable } from "./database.ts";
import { conflictOnDuplicate } from "./unique-violation.ts";

/** A customer of the server: every trace, model and key belongs to one. */
export interface Tenant {
  /** `ten_<hex>`, what rows reference. */
  id: string;
  /** A unique lower-case slug, e.g. `acme`. */
  name: string;
  /** ISO 8601 date-time. */
  createdAt: string;
}

const tenantNamePattern = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** Creates a tenant; names are unique, lower-case slugs such as `acme` or `team-7`. */
export async function createTenant(db: Queryable, name: unknown): Promise<Tenant> {
  if (typeof name !== "string" || !tenantNamePattern.test(name)) {
    throw new InvalidInputError(
      `name: expected 1-63 lower-case letters, digits, '-' or '_' starting with a letter or digit, got ${JSON.stringify(name)}`,
      { field: "name" },
    );
  }
  const id = `ten_${randomBytes(8).toString("hex")}`;
  const rows = await conflictOnDuplicate(
    () =>
      db.query<{ created_at: string }>(
        "insert into tenants (id, name) values ($1, $2) returning created_at",
        [id, name],
      ),
    `a tenant named "${name}" already exists`,
  );
  return { id, name, createdAt: new Date(rows[0].created_at).toISOString() };
}

/** Every tenant, oldest first. */
export async function listTenants(db: Queryable): Promise<Tenant[]> {
  const rows = await db.query<{ id: string; name: string; created_at: string }>(
    "select id, name, created_at from tenants order by created_at, name",
  );
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: new Date(r.created_at).toISOString() }));
}

/** The tenant with this id or name, or null. */
export async function findTenant(db: Queryable, idOrName: string): Promise<Tenant | null> {
  const rows = await db.query<{ id: string; name: string; created_at: string }>(
    "select id, name, created_at from tenants where id = $1 or name = $1",
    [idOrName],
  );
  const r = rows[0];
  return r ? { id: r.id, name: r.name, createdAt: new Date(r.created_at).toISOString() } : null;
}
