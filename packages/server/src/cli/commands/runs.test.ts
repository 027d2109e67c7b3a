import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { loadServerConfig } from "../../config/server-config.ts";
import {
  ingestJudged,
  QUICK_RUN,
  toolcallTraffic,
} from "../../orchestrator/__fixtures__/orchestrator-tenant.ts";
import { type RunningServer, startServer } from "../../serve/start-server.ts";
import { registerModelVersion } from "../../store/model-registry.ts";
import { main } from "../main.ts";

const { traffic, setupRegistry } = toolcallTraffic(44, 100);

describe("arc runs and arc orchestrator against arc serve", () => {
  let server: RunningServer;
  let key: string;

  async function arc(argv: string[]): Promise<{ code: number; out: string }> {
    const log = mock.method(console, "log", () => {});
    try {
      const code = await main([...argv, "--url", server.url, "--key", key]);
      return { code, out: log.mock.calls.map((c) => c.arguments.join(" ")).join("\n") };
    } finally {
      log.mock.restore();
    }
  }

  before(async () => {
    const home = await mkdtemp(join(tmpdir(), "arc-runs-cli-"));
    server = await startServer(loadServerConfig({}, { home, port: 0 }), {
      failures: { setupRegistry },
      orchestrator: { intervalMs: 100, pollMs: 100, datasetSize: 16 },
    });
    key = server.credentials?.tenantKey as string;
    const [tenant] = await server.db.query<{ id: string }>("select id from tenants");
    const config = configForSize("tiny");
    await writeHfCheckpoint(join(home, "base"), config, initWeights(config, 3));
    await registerModelVersion(server.db, tenant.id, {
      name: "tiny-base",
      status: "promoted",
      artifactDir: join(home, "base"),
      actor: "test",
    });
    await ingestJudged(server.db, tenant.id, traffic, setupRegistry);
  });
  after(() => server?.close());

  it("starts a run that the server trains by itself, lists it, shows its steps and its candidate", async () => {
    const started = await arc(["runs", "start", "toolcall-dpo", ...QUICK_RUN, "--json"]);
    assert.equal(started.code, 0);
    const { id } = JSON.parse(started.out) as { id: string };
    let shown = "";
    for (const deadline = Date.now() + 50_000; Date.now() < deadline; ) {
      shown = (await arc(["runs", "show", id])).out;
      if (/status=(succeeded|failed)/.test(shown)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.match(shown, /status=succeeded/, shown);
    assert.match(shown, /candidate mv_[0-9a-f]+/);
    assert.match(shown, /^2\s/m, "the last step's row");
    const listed = await arc(["runs", "ls"]);
    assert.match(listed.out, new RegExp(`${id}\\s+succeeded\\s+api\\s+2/2`));
    assert.match(listed.out, /orchestrator: off/);
  });

  it("shows the orchestrator's status and cancels a queued run", async () => {
    const status = await arc(["orchestrator", "status", "--json"]);
    const parsed = JSON.parse(status.out) as {
      enabled: boolean;
      newFailures: number;
      productionModelId: string;
      env: string | null;
    };
    assert.equal(parsed.enabled, false);
    assert.match(parsed.productionModelId, /^mv_/);
    // no failure came since the last run: the next run would keep its recipe's family
    assert.equal(parsed.env, null);
    assert.match(
      (await arc(["orchestrator", "status"])).out,
      /new failures 0 \(the next run trains the recipe's family\)/,
    );
    await server.runs.orchestrator.close();
    const { id } = JSON.parse((await arc(["runs", "start", "trainer.steps=3", "--json"])).out) as {
      id: string;
    };
    const cancelled = await arc(["runs", "cancel", id]);
    assert.equal(cancelled.out, `run ${id} cancelled`);
  });
});
