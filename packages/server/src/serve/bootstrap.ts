import type { Database } from "../store/database.ts";
import { createApiKey } from "../store/keys.ts";
import { createTenant } from "../store/tenants.ts";
import type { LocalCredentials } from "./credentials.ts";

/**
 * On the very first start against a database, makes an admin key, a `default` tenant and a key for it, and returns
 * them (the only time they exist in clear). Later starts, from any process, return null.
 */
export async function bootstrapDatabase(db: Database): Promise<LocalCredentials | null> {
  return db.transaction(async (tx) => {
    const claimed = await tx.query(
      "insert into settings (key, value) values ('bootstrapped_at', to_jsonb(now())) on conflict do nothing returning 1",
    );
    if (claimed.length === 0) return null;
    const admin = await createApiKey(tx, { role: "admin" }, "created on first start");
    const tenant = await createTenant(tx, "default");
    const tenantKey = await createApiKey(
      tx,
      { role: "tenant", tenantId: tenant.id },
      "created on first start",
    );
    return { adminKey: admin.key, tenant: tenant.name, tenantKey: tenantKey.key };
  });
}
