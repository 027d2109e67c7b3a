import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OpenAITestServer } from "@arc/sdk/test-doubles";
import { loadServerConfig } from "../../config/server-config.ts";
import { type ModelVersion, registerModelVersion } from "../../store/model-registry.ts";
import { findTenant } from "../../store/tenants.ts";
import { type RunningServer, startServer } from "../start-server.ts";

/** `arc serve` whose first tenant's production model is an upstream: the SDK's OpenAI test server. */
export interface GatewayOnTestProvider {
  server: RunningServer;
  /** The upstream, a test double of a hosted model; set its `reply`. */
  provider: OpenAITestServer;
  tenantId: string;
  /** The tenant's key. */
  key: string;
  /** The promoted model version the gateway routes to. */
  model: ModelVersion;
  /** Stops both and removes the server's home. */
  close(): Promise<void>;
}

/** Starts `arc serve` (embedded PGlite in a temp home, real HTTP) in front of a fresh OpenAI test server. */
export async function startGatewayOnTestProvider(): Promise<GatewayOnTestProvider> {
  const home = mkdtempSync(join(tmpdir(), "arc-gateway-test-"));
  const provider = await OpenAITestServer.start();
  const server = await startServer(loadServerConfig({}, { home, port: 0 }));
  const tenantId = (await findTenant(server.db, server.credentials?.tenant as string))?.id as string;
  const model = await registerModelVersion(server.db, tenantId, {
    name: "upstream-model",
    status: "promoted",
    upstream: { baseUrl: provider.url, model: "m" },
    actor: "test",
  });
  return {
    server,
    provider,
    tenantId,
    key: server.credentials?.tenantKey as string,
    model,
    async close() {
      await server.close();
      await provider.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
