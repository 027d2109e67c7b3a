import { createHash, randomBytes } from "node:crypto";
import { InvalidInputError, NotFoundError } from "@arc/core";
import type { Queryable } from "./database.ts";

/** Who a request acts as: an admin, or one tenant. */
export type Principal =
  | { role: "admin"; keyId: string }
  | { role: "tenant"; keyId: string; tenantId: string };

/** A key as listed: never the key itself, only its first characters. */
export interface ApiKeyInfo {
  /** What audit entries and revocation refer to. */
  id: string;
  /** The tenant the key acts for; null for an admin key. */
  tenantId: string | null;
  /** What the key may do. */
  role: "admin" | "tenant";
  /** A label for people, e.g. `ci` or `laptop`. */
  name: string;
  /** The key's first characters, enough to recognize it in a config without revealing it. */
  keyPrefix: string;
  /** ISO 8601 date-time. */
  createdAt: string;
  /** ISO 8601 date-time of revocation; null while the key works. */
  revokedAt: string | null;
}

/** Keys are 32 random bytes, so an unsalted SHA-256 is enough to make a stolen table useless. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** Makes a new key; the returned `key` is shown once and stored only as its hash. */
export async function createApiKey(
  db: Queryable,
  options: { role: "admin" } | { role: "tenant"; tenantId: string },
  name = "",
): Promise<{ id: string; key: string; keyPrefix: string }> {
  const tenantId = options.role === "tenant" ? options.tenantId : null;
  if (tenantId !== null) {
    const found = await db.query("select 1 from tenants where id = $1", [tenantId]);
    if (found.length === 0) throw new NotFoundError(`no tenant with id "${tenantId}"`);
  }
  const key = `arc_${options.role === "admin" ? "admin" : "sk"}_${randomBytes(32).toString("base64url")}`;
  const id = `key_${randomBytes(8).toString("hex")}`;
  const keyPrefix = key.slice(0, 14);
  await db.query(
    "insert into api_keys (id, tenant_id, role, name, key_prefix, key_hash) values ($1, $2, $3, $4, $5, $6)",
    [id, tenantId, options.role, name, keyPrefix, hashApiKey(key)],
  );
  return { id, key, keyPrefix };
}

/** The principal a key stands for, or null for an unknown or revoked key. */
export async function findPrincipal(db: Queryable, key: string): Promise<Principal | null> {
  const rows = await db.query<{ id: string; role: string; tenant_id: string | null }>(
    "select id, role, tenant_id from api_keys where key_hash = $1 and revoked_at is null",
    [hashApiKey(key)],
  );
  const row = rows[0];
  if (!row) return null;
  return row.role === "admin"
    ? { role: "admin", keyId: row.id }
    : { role: "tenant", keyId: row.id, tenantId: row.tenant_id as string };
}

/** Revokes a key at once; revoking twice is harmless. `tenantId` restricts which keys may be revoked. */
export async function revokeApiKey(db: Queryable, keyId: string, tenantId?: string): Promise<void> {
  const rows = await db.query(
    "update api_keys set revoked_at = coalesce(revoked_at, now()) where id = $1 and ($2::text is null or tenant_id = $2) returning id",
    [keyId, tenantId ?? null],
  );
  if (rows.length === 0) throw new NotFoundError(`no API key with id "${keyId}"`);
}

/** Keys of one tenant, or every key when `tenantId` is omitted. */
export async function listApiKeys(db: Queryable, tenantId?: string): Promise<ApiKeyInfo[]> {
  const rows = await db.query<Record<string, unknown>>(
    `select id, tenant_id, role, name, key_prefix, created_at, revoked_at from api_keys
     where $1::text is null or tenant_id = $1 order by created_at, id`,
    [tenantId ?? null],
  );
  return rows.map((r) => ({
    id: r.id as string,
    tenantId: (r.tenant_id as string | null) ?? null,
    role: r.role as "admin" | "tenant",
    name: r.name as string,
    keyPrefix: r.key_prefix as string,
    createdAt: new Date(r.created_at as string).toISOString(),
    revokedAt: r.revoked_at ? new Date(r.revoked_at as string).toISOString() : null,
  }));
}

/** Checks a key name: short and printable, since it shows in listings. */
export function validateKeyName(name: unknown): string {
  if (name === undefined) return "";
  if (typeof name !== "string" || name.length > 128) {
    throw new InvalidInputError(
      `name: expected a string of at most 128 characters, got ${JSON.stringify(name)}`,
      {
        field: "name",
      },
    );
  }
  return name;
}
