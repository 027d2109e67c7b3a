// The Arc server the gateway benchmark talks to: the gateway with one tenant whose production model is the upstream
// at ARC_BENCH_UPSTREAM_URL, traces recorded to PGlite in a temp ARC_HOME as `arc serve` does by default (or to the
// PostgreSQL database at ARC_BENCH_DATABASE_URL). Prints one JSON line with its URL and the tenant's key.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { startServer } from "../packages/server/src/serve/start-server.ts";
import { createApiKey } from "../packages/server/src/store/keys.ts";
import { registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { createTenant } from "../packages/server/src/store/tenants.ts";

const upstreamUrl = process.env.ARC_BENCH_UPSTREAM_URL;
if (!upstreamUrl)
  throw new Error("gateway-bench-server: set ARC_BENCH_UPSTREAM_URL to the upstream's /v1 URL");
const home = mkdtempSync(join(tmpdir(), "arc-gateway-bench-"));
const server = await startServer(
  loadServerConfig({
    ARC_HOME: home,
    ARC_PORT: "0",
    DATABASE_URL: process.env.ARC_BENCH_DATABASE_URL || undefined,
  }),
  { release: { workers: false } },
);
const tenant = await createTenant(server.db, "bench");
await registerModelVersion(server.db, tenant.id, {
  name: "bench-upstream-model",
  status: "promoted",
  upstream: { baseUrl: upstreamUrl, model: "bench-model" },
  actor: "bench",
});
const { key } = await createApiKey(server.db, { role: "tenant", tenantId: tenant.id });
process.stdout.write(`${JSON.stringify({ url: `${server.url}/v1`, key })}\n`);
process.once("SIGTERM", () => {
  void server.close().then(() => process.exit(0));
});
