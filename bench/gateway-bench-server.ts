// The process the gateway benchmark talks to: an Arc server (gateway, PGlite in a temp ARC_HOME, traces recorded)
// and, in the same process, the model it fronts served directly over HTTP too, so the benchmark can call the same
// model both ways. The model is an instant answer book (a test double), so what is measured is the gateway's own
// cost, not generation time. Prints one JSON line with the URLs and keys.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEngineServer } from "../packages/engine/src/index.ts";
import { loadServerConfig } from "../packages/server/src/config/server-config.ts";
import { AnswerBookEngine } from "../packages/server/src/deploy/__fixtures__/answer-book-engine.ts";
import { ModelPool } from "../packages/server/src/gateway/model-pool.ts";
import { startServer } from "../packages/server/src/serve/start-server.ts";
import { createApiKey } from "../packages/server/src/store/keys.ts";
import { registerModelVersion } from "../packages/server/src/store/model-registry.ts";
import { createTenant } from "../packages/server/src/store/tenants.ts";

const answer = '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}';
const engine = new AnswerBookEngine(new Map(), answer);
const direct = await startEngineServer(engine, { modelId: "bench-model" });
const home = mkdtempSync(join(tmpdir(), "arc-gateway-bench-"));
const server = await startServer(
  loadServerConfig({ ARC_HOME: home, ARC_PORT: "0", DATABASE_URL: process.env.ARC_BENCH_DATABASE_URL }),
  {
    release: { pool: new ModelPool({ loadEngine: async () => engine }), workers: false },
  },
);
const upstreamTenant = await createTenant(server.db, "bench-upstream");
await registerModelVersion(server.db, upstreamTenant.id, {
  name: "bench-upstream-model",
  status: "promoted",
  upstream: { baseUrl: direct.baseURL, model: "bench-model" },
  actor: "bench",
});
const embeddedTenant = await createTenant(server.db, "bench-embedded");
await registerModelVersion(server.db, embeddedTenant.id, {
  name: "bench-embedded-model",
  status: "promoted",
  artifactDir: join(home, "answer-book"),
  actor: "bench",
});
const key = async (tenantId: string) => (await createApiKey(server.db, { role: "tenant", tenantId })).key;
process.stdout.write(
  `${JSON.stringify({
    gatewayUrl: `${server.url}/v1`,
    directUrl: direct.baseURL,
    upstreamKey: await key(upstreamTenant.id),
    embeddedKey: await key(embeddedTenant.id),
  })}\n`,
);
process.once("SIGTERM", () => {
  void Promise.all([server.close(), direct.close()]).then(() => process.exit(0));
});
