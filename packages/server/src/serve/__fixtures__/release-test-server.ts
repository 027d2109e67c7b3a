import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import type { RegistrationPolicy } from "../../deploy/registration-policy.ts";
import { createApp } from "../../http/app.ts";
import { Authenticator } from "../../http/authenticator.ts";
import { ServerMetrics } from "../../metrics/metrics-registry.ts";
import type { Database } from "../../store/database.ts";
import { createApiKey } from "../../store/keys.ts";
import { createTenant } from "../../store/tenants.ts";
import { createReleaseService, type ReleaseService, type ReleaseServiceOptions } from "../release-service.ts";
import { tenantRoutes } from "../tenant-routes.ts";

/** A real HTTP server with the release service's routes, one tenant and its key; workers off unless asked. */
export interface ReleaseTestServer {
  url: string;
  tenantId: string;
  key: string;
  release: ReleaseService;
  close(): Promise<void>;
}

/**
 * Starts it; `registration` defaults to a home under the OS temp folder with no upstreams allowed (so HTTP
 * registrations of upstream models are refused unless a test allows some).
 */
export async function startReleaseTestServer(
  db: Database,
  {
    startWorkers = true,
    ...options
  }: Omit<ReleaseServiceOptions, "db"> & {
    registration?: RegistrationPolicy;
    /** false: the test calls `release.start()` itself, once its set-up can no longer race the workers' first tick. */
    startWorkers?: boolean;
  } = {},
): Promise<ReleaseTestServer> {
  const {
    registration = { home: join(tmpdir(), "arc-release-test-home"), upstreams: {} },
    ...serviceOptions
  } = options;
  const release = createReleaseService({ db, workers: false, ...serviceOptions });
  const app = createApp({
    db,
    authenticator: new Authenticator(db),
    metrics: new ServerMetrics(),
    maxBodyBytes: 1024 * 1024,
    tenantRoutes: tenantRoutes({
      db,
      maxBodyBytes: 1024 * 1024,
      release: { service: release, registration },
    }),
  });
  const tenant = await createTenant(db, `acme-${randomBytes(3).toString("hex")}`);
  const key = (await createApiKey(db, { role: "tenant", tenantId: tenant.id })).key;
  const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as AddressInfo;
  if (startWorkers) release.start();
  return {
    url: `http://127.0.0.1:${port}`,
    tenantId: tenant.id,
    key,
    release,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
      await release.close();
    },
  };
}
