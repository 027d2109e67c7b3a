import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { RunDir, type RunState } from "@arc/rl";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { getModelVersion } from "../store/model-registry.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "./__fixtures__/orchestrator-tenant.ts";
import { executeRun } from "./execute-run.ts";
import { Orchestrator } from "./orchestrator.ts";
import { OrchestratorConfig } from "./orchestrator-config.ts";
import { createRun, getRun, tenantRunsDir } from "./run-store.ts";

const { traffic, setupRegistry } = toolcallTraffic(55, 100);

describe("a run whose server died", () => {
  let db: Database;
  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
  });
  after(() => db?.close());

  it("is taken over by another server once its heartbeat is stale and resumed from its last checkpoint to a candidate", async () => {
    const { tenantId, artifactsDir } = await tenantWithProduction(db, "acme");
    await ingestJudged(db, tenantId, traffic, setupRegistry);
    const runsDir = tenantRunsDir(artifactsDir, tenantId);
    const run = await createRun(db, tenantId, {
      trigger: "api",
      recipePath: "recipes/toolcall-dpo.yaml",
      overrides: [...QUICK_RUN, "trainer.steps=12", "trainer.evalEvery=12"],
      runsDir,
      status: "running",
      owner: "server-a",
    });
    const dir = new RunDir(join(runsDir, run.id));
    let killedAt: RunState | null = null;
    // server A trains until its first checkpoint, then dies with its training process (kill -9, no cleanup)
    const dying = await executeRun(db, run, {
      owner: "server-a",
      pollMs: 50,
      datasetSize: 16,
      setupRegistry,
      onAbort: "requeue",
      onProgress: () => {
        if (killedAt) return;
        const state = JSON.parse(readFileSync(dir.statePath, "utf8")) as RunState;
        if (!state.lastCheckpoint) return;
        killedAt = state;
        process.kill(state.pid, "SIGKILL");
      },
    }).catch((error) => error);
    assert.ok(killedAt, `A's run was not killed mid-way: ${JSON.stringify(dying)}`);
    const frozen = killedAt as RunState;
    assert.ok(frozen.step < 12);
    // A died before it could record anything: its row stays running with an old heartbeat
    await db.query(
      "update runs set status = 'running', owner = 'server-a', ended_at = null, error = null, heartbeat_at = now() - interval '1 hour' where id = $1",
      [run.id],
    );

    const b = new Orchestrator({
      db,
      config: OrchestratorConfig.parse({ staleMs: 60_000, pollMs: 50, datasetSize: 16 }),
      artifactsDir,
      setupRegistry,
    });
    try {
      assert.deepEqual(
        (await b.tick()).started.map((r) => [r.id, r.attempts]),
        [[run.id, 2]],
      );
      await b.idle();
    } finally {
      await b.close();
    }
    const ended = await getRun(db, tenantId, run.id);
    assert.equal(ended.status, "succeeded", ended.error ?? "");
    assert.equal(ended.step, 12);
    const state = await dir.readState();
    assert.equal(state.startedAt, frozen.startedAt, "the same run continued, not a new one");
    const steps = (await dir.readMetrics()).map((r) => r.step);
    assert.deepEqual(steps, [...Array(13).keys()], "every step once, none repeated after the resume");
    const candidate = await getModelVersion(db, tenantId, ended.candidateId as string);
    assert.equal(candidate.lineage.runId, run.id);
    assert.deepEqual(
      candidate.lineage.datasets,
      ended.datasets.map(({ id, version, kind }) => ({ id, version, kind })),
    );
  });
});
