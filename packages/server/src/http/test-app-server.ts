import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import type { Database } from "../store/database.ts";
import { createApiKey } from "../store/keys.ts";
import { createTenant } from "../store/tenants.ts";
import { type AppDeps, createApp } from "./app.ts";
import { Authenticator } from "./authenticator.ts";

/** A real HTTP server over the app on a test database, with an admin key and two tenants with a key each. */
export interface TestAppServer {
  url: string;
  metrics: ServerMetrics;
  adminKey: string;
  tenants: { id: string; name: string; key: string }[];
  close(): Promise<void>;
}

export async function startTestAppServer(
  db: Database,
  options: { maxBodyBytes?: number; tenantRoutes?: AppDeps["tenantRoutes"] } = {},
): Promise<TestAppServer> {
  const metrics = new ServerMetrics();
  const app = createApp({
    db,
    authenticator: new Authenticator(db),
    metrics,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    tenantRoutes: options.tenantRoutes,
  });
  const adminKey = (await createApiKey(db, { role: "admin" })).key;
  const tenants = [];
  for (const name of ["acme", "globex"]) {
    const tenant = await createTenant(db, name);
    tenants.push({
      id: tenant.id,
      name,
      key: (await createApiKey(db, { role: "tenant", tenantId: tenant.id })).key,
    });
  }
  const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    metrics,
    adminKey,
    tenants,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
