import type { DetectionConfig, DetectionConfigInput } from "@arc/core";
import type { Queryable } from "./database.ts";

/** A tenant's stored detection settings (`{}` until it sets some: every field has a default). */
export async function loadDetectorConfig(db: Queryable, tenantId: string): Promise<DetectionConfigInput> {
  const [row] = await db.query<{ config: DetectionConfigInput }>(
    "select config from detector_configs where tenant_id = $1",
    [tenantId],
  );
  return row?.config ?? {};
}

/** Stores a tenant's detection settings (already validated by a registry). */
export async function saveDetectorConfig(
  db: Queryable,
  tenantId: string,
  config: DetectionConfig,
): Promise<void> {
  await db.query(
    `insert into detector_configs (tenant_id, config) values ($1, $2::jsonb)
     on conflict (tenant_id) do update set config = excluded.config, updated_at = now()`,
    [tenantId, JSON.stringify(config)],
  );
}
