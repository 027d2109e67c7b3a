import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "./__fixtures__/orchestrator-tenant.ts";
import { Orchestrator, tenantOrchestratorStatus } from "./orchestrator.ts";
import { OrchestratorConfig } from "./orchestrator-config.ts";
import { getRun, listRuns } from "./run-store.ts";

const { traffic, setupRegistry } = toolcallTraffic(31, 60);

/** Settings under which a tenant with any new failure is due at once. */
const DUE_AT_ONCE = { enabled: true, minNewFailures: 1, cooldownMs: 0, overrides: QUICK_RUN };

/** A tenant with a production model and judged failures in patterns. */
async function tenantWithFailures(db: Database, name: string) {
  const tenant = await tenantWithProduction(db, name);
  await ingestJudged(db, tenant.tenantId, traffic, setupRegistry);
  return tenant;
}

for (const target of databasesUnderTest()) {
  describe(`the orchestrator's policy on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    before(async () => {
      db = await target.open();
    });
    after(() => db?.close());

    it("starts no run while the tenant's last candidate is in validation or canary, unless configured for more", async () => {
      const { tenantId, artifactsDir } = await tenantWithFailures(db, "one-at-a-time");
      const config = OrchestratorConfig.parse(DUE_AT_ONCE);
      const candidate = await registerModelVersion(db, tenantId, {
        name: "run-1/final",
        artifactDir: join(artifactsDir, "c"),
        actor: "test",
      });
      const inValidation = await tenantOrchestratorStatus(db, tenantId, config);
      assert.equal(inValidation.due, false);
      assert.match(inValidation.reason, /model run-1\/final in validation in flight; at most 1/);
      assert.deepEqual(
        inValidation.inFlight.models.map((m) => m.status),
        ["candidate"],
      );
      assert.deepEqual(
        await new Orchestrator({ db, config, artifactsDir, setupRegistry }).queueIfDue(tenantId),
        null,
      );

      await db.query("update model_versions set status = 'canary' where tenant_id = $1 and id = $2", [
        tenantId,
        candidate.id,
      ]);
      const inCanary = await tenantOrchestratorStatus(db, tenantId, config);
      assert.equal(inCanary.due, false);
      assert.match(inCanary.reason, /model run-1\/final in canary in flight/);

      const two = OrchestratorConfig.parse({ ...config, maxCandidatesInFlight: 2 });
      assert.equal((await tenantOrchestratorStatus(db, tenantId, two)).due, true);

      await db.query("update model_versions set status = 'rolled_back' where tenant_id = $1 and id = $2", [
        tenantId,
        candidate.id,
      ]);
      assert.equal((await tenantOrchestratorStatus(db, tenantId, config)).due, true);
    });

    it("queues nothing once it is stopping, though a run is due", async () => {
      const { tenantId, artifactsDir } = await tenantWithFailures(db, "stopping");
      const config = OrchestratorConfig.parse(DUE_AT_ONCE);
      assert.equal((await tenantOrchestratorStatus(db, tenantId, config)).due, true);
      const orchestrator = new Orchestrator({ db, config, artifactsDir, setupRegistry });
      await orchestrator.close();
      assert.deepEqual(await orchestrator.tick(), { queued: [], started: [] });
      assert.equal(await orchestrator.queueIfDue(tenantId), null);
      assert.deepEqual(await listRuns(db, tenantId), []);
    });

    it("stops within 10 s during an SFT warm-up and hands the run back to the queue", {
      skip: target.name !== "pglite" && "one engine is enough for the trainer's stop",
    }, async () => {
      const { tenantId, artifactsDir } = await tenantWithFailures(db, "warm-up");
      const config = OrchestratorConfig.parse({
        ...DUE_AT_ONCE,
        recipe: "recipes/corrections-dpo.yaml",
        overrides: [...QUICK_RUN, "sftWarmUp.steps=100000", "sftWarmUp.promptsPerStep=1"],
        pollMs: 100,
        datasetSize: 16,
      });
      // this tenant's run only: the worker (not enabled) claims what is queued and queues nothing of the others'
      const queued = await new Orchestrator({ db, config, artifactsDir, setupRegistry }).queueIfDue(tenantId);
      assert.ok(queued, "the run is due");
      const orchestrator = new Orchestrator({
        db,
        config: { ...config, enabled: false },
        artifactsDir,
        setupRegistry,
      });
      const { started } = await orchestrator.tick();
      assert.deepEqual(
        started.map((r) => r.id),
        [queued.id],
      );
      const run = started[0];
      const warmUpState = join(artifactsDir, tenantId, "runs", run.id, "sft-warm-up", "state.json");
      await waitUntil(
        async () => {
          const now = await getRun(db, tenantId, run.id);
          assert.ok(
            now.status === "running" || now.status === "queued",
            `the run ended ${now.status}: ${now.error}`,
          );
          return existsSync(warmUpState);
        },
        "the SFT warm-up to run",
        { timeoutMs: 60_000 },
      );
      const asked = performance.now();
      await orchestrator.close();
      const stopS = (performance.now() - asked) / 1000;
      assert.ok(stopS < 10, `stopping took ${stopS.toFixed(1)} s`);
      const after = await getRun(db, tenantId, run.id);
      assert.deepEqual([after.status, after.owner, after.error], ["queued", null, null]);

      // another server resumes it from its own recipe.yaml: the warm-up goes on where it stopped
      const stoppedAt = (JSON.parse(readFileSync(warmUpState, "utf8")) as { step: number }).step;
      const next = new Orchestrator({
        db,
        config: { ...config, enabled: false },
        artifactsDir,
        setupRegistry,
      });
      assert.deepEqual(
        (await next.tick()).started.map((r) => [r.id, r.attempts]),
        [[run.id, 2]],
      );
      await waitUntil(
        async () => {
          const now = await getRun(db, tenantId, run.id);
          assert.equal(now.status, "running", `the resumed run ended ${now.status}: ${now.error}`);
          return (JSON.parse(readFileSync(warmUpState, "utf8")) as { step: number }).step > stoppedAt;
        },
        "the resumed warm-up to take a step",
        { timeoutMs: 60_000 },
      );
      await next.close();
      assert.equal((await getRun(db, tenantId, run.id)).status, "queued");
    });
  });
}
