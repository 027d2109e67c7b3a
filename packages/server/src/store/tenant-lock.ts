import type { Queryable } from "./database.ts";

/** The kinds of a tenant's work that transaction-scoped advisory locks serialize, each its lock class (arbitrary, distinct). */
const TENANT_LOCK_CLASSES = {
  datasetBuilds: 0x41726364,
  modelRegistrations: 0x4172636d,
} as const;

/** What a tenant lock serializes: dataset builds, or model registrations. */
export type TenantLockKind = keyof typeof TENANT_LOCK_CLASSES;

/**
 * Takes the tenant's `kind` lock for the rest of transaction `tx`, waiting while another transaction holds it (in
 * any process sharing the database). A check followed by a write holds only when both run under it.
 */
export async function lockTenant(tx: Queryable, kind: TenantLockKind, tenantId: string): Promise<void> {
  await tx.query("select pg_advisory_xact_lock($1, hashtext($2))", [TENANT_LOCK_CLASSES[kind], tenantId]);
}
