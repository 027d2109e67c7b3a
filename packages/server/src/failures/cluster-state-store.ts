import type { ClusterState } from "@arc/core";
import type { Queryable } from "../store/database.ts";

/**
 * Locks a tenant's clusterer state row for this transaction (creating it on first use) and returns its version.
 * Workers in several processes assign a tenant's failures one batch at a time this way, so pattern ids and counts
 * never fork.
 */
export async function lockClusterState(tx: Queryable, tenantId: string): Promise<number> {
  await tx.query("insert into cluster_states (tenant_id) values ($1) on conflict do nothing", [tenantId]);
  const [row] = await tx.query<{ version: string }>(
    "select version::text as version from cluster_states where tenant_id = $1 for update",
    [tenantId],
  );
  return Number(row.version);
}

/** The saved clusterer state of a tenant; null before its first failure. */
export async function loadClusterState(db: Queryable, tenantId: string): Promise<ClusterState | null> {
  const [row] = await db.query<{ state: ClusterState | null }>(
    "select state from cluster_states where tenant_id = $1",
    [tenantId],
  );
  return row?.state ?? null;
}

/** Saves a tenant's clusterer state (under the lock taken by `lockClusterState`); returns the new version. */
export async function saveClusterState(
  tx: Queryable,
  tenantId: string,
  state: ClusterState,
): Promise<number> {
  const [row] = await tx.query<{ version: string }>(
    `update cluster_states set state = $2::jsonb, version = version + 1, updated_at = now()
      where tenant_id = $1 returning version::text as version`,
    [tenantId, JSON.stringify(state)],
  );
  return Number(row.version);
}
