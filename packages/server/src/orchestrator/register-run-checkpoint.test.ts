import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import { configForSize, initWeights, writeHfCheckpoint } from "@arc/engine";
import { main } from "../cli/main.ts";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "../serve/start-server.ts";
import { listModelVersions, type ModelVersion, registerModelVersion } from "../store/model-registry.ts";
import { QUICK_RUN } from "./__fixtures__/orchestrator-tenant.ts";

describe("arc train with a server configured", () => {
  let server: RunningServer;
  let home: string;
  let tenantId: string;
  let base: ModelVersion;

  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-train-register-"));
    server = await startServer(loadServerConfig({}, { home, port: 0 }));
    [{ id: tenantId }] = await server.db.query<{ id: string }>("select id from tenants");
    const config = configForSize("tiny");
    await writeHfCheckpoint(join(home, "base"), config, initWeights(config, 3));
    base = await registerModelVersion(server.db, tenantId, {
      name: "tiny-base",
      status: "promoted",
      artifactDir: join(home, "base"),
      actor: "test",
    });
  });
  after(() => server?.close());

  const train = async (extra: string[]) => {
    const log = mock.method(console, "log", () => {});
    const err = mock.method(process.stderr, "write", () => true);
    try {
      return await main([
        "train",
        "recipes/toolcall-dpo.yaml",
        ...QUICK_RUN,
        `model.path=${join(home, "base")}`,
        "--runs-dir",
        join(home, "artifacts", tenantId, "runs"),
        "--url",
        server.url,
        "--key",
        server.credentials?.tenantKey as string,
        ...extra,
      ]);
    } finally {
      log.mock.restore();
      err.mock.restore();
    }
  };

  it("registers the completed run's last checkpoint as a candidate with its lineage, and not with --no-register", async () => {
    assert.equal(await train(["--run-id", "cli-run", "--base-model", base.id]), 0);
    const [candidate] = await listModelVersions(server.db, tenantId, ["candidate"]);
    assert.equal(candidate.name, "cli-run/step-2");
    assert.equal(candidate.parentId, base.id);
    assert.equal(
      candidate.artifactDir,
      join(home, "artifacts", tenantId, "runs", "cli-run", "checkpoints", "step-2"),
    );
    assert.equal(candidate.lineage.runId, "cli-run");
    assert.equal(candidate.lineage.recipe, "toolcall-dpo");
    assert.match(String(candidate.lineage.recipeHash), /^sha256:[0-9a-f]{64}$/);
    assert.equal(candidate.lineage.baseModel, base.id);
    assert.equal(candidate.metrics.steps, 2);

    assert.equal(await train(["--run-id", "cli-run-2", "--no-register"]), 0);
    assert.equal((await listModelVersions(server.db, tenantId, ["candidate"])).length, 1);
  });
});
