import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { listAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { getModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "./__fixtures__/orchestrator-tenant.ts";
import { Orchestrator, tenantOrchestratorStatus } from "./orchestrator.ts";
import { OrchestratorConfig } from "./orchestrator-config.ts";
import { createRun, getRun, listRuns, tenantRunsDir } from "./run-store.ts";

const { traffic, setupRegistry } = toolcallTraffic(21, 240);

for (const target of databasesUnderTest()) {
  describe(`orchestrator on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    before(async () => {
      db = await target.open();
    });
    after(() => db?.close());

    it("queues exactly one run when new failures cross the threshold, even with two servers looking, and registers its candidate with full lineage", async () => {
      const { tenantId, base, artifactsDir } = await tenantWithProduction(db, "acme");
      const config = OrchestratorConfig.parse({
        enabled: true,
        minNewFailures: 40,
        cooldownMs: 0,
        overrides: QUICK_RUN,
        pollMs: 100,
        datasetSize: 24,
      });
      const options = { db, config, artifactsDir, setupRegistry };
      const one = new Orchestrator(options);
      const two = new Orchestrator(options);
      try {
        await ingestJudged(db, tenantId, traffic.slice(0, 40), setupRegistry);
        const below = await tenantOrchestratorStatus(db, tenantId, config);
        assert.ok(below.newFailures > 0 && below.newFailures < 40, `failures: ${below.newFailures}`);
        assert.equal(below.due, false);
        assert.deepEqual((await one.tick()).queued, []);

        await ingestJudged(db, tenantId, traffic.slice(40), setupRegistry);
        const due = await tenantOrchestratorStatus(db, tenantId, config);
        assert.deepEqual([due.due, due.env], [true, "toolcall"]);
        const [a, b] = await Promise.all([one.tick(), two.tick()]);
        assert.equal(a.queued.length + b.queued.length, 1, "one run queued between the two servers");
        assert.equal(a.started.length + b.started.length, 1, "and started by one of them");
        assert.deepEqual((await one.tick()).queued, [], "nothing more while it runs");
        await Promise.all([one.idle(), two.idle()]);

        const [run] = await listRuns(db, tenantId);
        assert.equal(run.status, "succeeded", run.error ?? "");
        assert.equal(run.trigger, "orchestrator");
        assert.deepEqual(run.overrides, [...QUICK_RUN, "data.env=toolcall"]);
        assert.equal(run.step, 2);
        assert.equal(run.baseModelId, base.id);
        assert.match(run.recipeHash ?? "", /^sha256:[0-9a-f]{64}$/);
        assert.deepEqual(run.datasets.map((d) => d.kind).sort(), ["eval", "prompts"]);
        assert.ok(run.patterns.length > 0 && run.sourceTraceCount > 0);
        assert.ok(run.candidateId);
        const candidate = await getModelVersion(db, tenantId, run.candidateId);
        assert.equal(candidate.status, "candidate");
        assert.equal(candidate.parentId, base.id);
        assert.ok(existsSync(join(candidate.artifactDir as string, "model.safetensors")));
        assert.ok((candidate.artifactDir as string).startsWith(join(artifactsDir, tenantId, "runs", run.id)));
        assert.deepEqual(
          {
            runId: candidate.lineage.runId,
            baseModel: candidate.lineage.baseModel,
            recipe: candidate.lineage.recipe,
            recipeHash: candidate.lineage.recipeHash,
            datasets: candidate.lineage.datasets,
            patterns: candidate.lineage.patterns,
            sourceTraceCount: candidate.lineage.sourceTraceCount,
          },
          {
            runId: run.id,
            baseModel: base.id,
            recipe: "recipes/toolcall-dpo.yaml",
            recipeHash: run.recipeHash,
            datasets: run.datasets.map(({ id, version, kind }) => ({ id, version, kind })),
            patterns: run.patterns,
            sourceTraceCount: run.sourceTraceCount,
          },
        );
        assert.equal(typeof candidate.metrics.heldOutFailureRate, "number");
        const audit = await listAudit(db, tenantId, { kind: "model_version", id: candidate.id });
        assert.equal(audit[0].actor, "system:orchestrator");
        assert.deepEqual((await one.tick()).queued, [], "no new failures since: no second run");
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    });

    it("trains the task family with the most new failures", async () => {
      const { tenantId } = await tenantWithProduction(db, "mixed");
      const mixed = toolcallTraffic(22, 160, { toolcall: 0.2, arith: 0.8 });
      await ingestJudged(db, tenantId, mixed.traffic, mixed.setupRegistry);
      const byEnv = await db.query<{ env: string; n: number }>(
        "select env, count(*)::int as n from failures where tenant_id = $1 group by env order by n desc",
        [tenantId],
      );
      assert.ok(byEnv.length === 2 && byEnv[0].n > byEnv[1].n, JSON.stringify(byEnv));
      const status = await tenantOrchestratorStatus(
        db,
        tenantId,
        OrchestratorConfig.parse({ enabled: true }),
      );
      assert.equal(status.env, byEnv[0].env);
    });

    it("trains at most maxParallelJobs runs at once and starts the next when one ends", async () => {
      const { tenantId, artifactsDir } = await tenantWithProduction(db, "globex");
      await ingestJudged(db, tenantId, traffic.slice(0, 120), setupRegistry);
      const config = OrchestratorConfig.parse({ maxParallelJobs: 1, pollMs: 100, datasetSize: 16 });
      const orchestrator = new Orchestrator({ db, config, artifactsDir, setupRegistry });
      try {
        const queued = [];
        for (const id of ["run_first", "run_second"]) {
          queued.push(
            await createRun(db, tenantId, {
              id,
              trigger: "api",
              recipePath: "recipes/toolcall-dpo.yaml",
              overrides: QUICK_RUN,
              runsDir: tenantRunsDir(artifactsDir, tenantId),
            }),
          );
        }
        const first = await orchestrator.tick();
        assert.deepEqual(
          first.started.map((r) => r.id),
          ["run_first"],
        );
        assert.deepEqual((await orchestrator.tick()).started, [], "no room for a second");
        assert.equal((await getRun(db, tenantId, "run_second")).status, "queued");
        await orchestrator.idle();
        assert.deepEqual(
          (await orchestrator.tick()).started.map((r) => r.id),
          ["run_second"],
        );
        await orchestrator.idle();
        const [one, two] = [
          await getRun(db, tenantId, "run_first"),
          await getRun(db, tenantId, "run_second"),
        ];
        assert.equal(one.status, "succeeded", one.error ?? "");
        assert.equal(two.status, "succeeded", two.error ?? "");
        assert.ok(
          Date.parse(two.startedAt as string) >= Date.parse(one.endedAt as string),
          "never both at once",
        );
      } finally {
        await orchestrator.close();
      }
    });
  });
}
