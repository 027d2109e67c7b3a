import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Hono } from "hono";
import { ServerMetrics } from "../../metrics/metrics-registry.ts";
import {
  ingestJudged,
  QUICK_RUN,
  tenantWithProduction,
  toolcallTraffic,
} from "../../orchestrator/__fixtures__/orchestrator-tenant.ts";
import { Orchestrator } from "../../orchestrator/orchestrator.ts";
import { OrchestratorConfig } from "../../orchestrator/orchestrator-config.ts";
import type { RunRecord } from "../../orchestrator/run-store.ts";
import type { Database } from "../../store/database.ts";
import { createApiKey } from "../../store/keys.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";
import { createApp } from "../app.ts";
import { Authenticator } from "../authenticator.ts";
import { runRoutes } from "./run-routes.ts";

const { traffic, setupRegistry } = toolcallTraffic(33, 120);

for (const target of databasesUnderTest()) {
  describe(`run routes on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let app: Hono;
    let orchestrator: Orchestrator;
    const keys: Record<string, string> = {};
    before(async () => {
      db = await target.open();
      const acme = await tenantWithProduction(db, "acme");
      const globex = await tenantWithProduction(db, "globex");
      await ingestJudged(db, acme.tenantId, traffic, setupRegistry);
      keys.acme = (await createApiKey(db, { role: "tenant", tenantId: acme.tenantId })).key;
      keys.globex = (await createApiKey(db, { role: "tenant", tenantId: globex.tenantId })).key;
      const config = OrchestratorConfig.parse({ minNewFailures: 5, pollMs: 100, datasetSize: 16 });
      orchestrator = new Orchestrator({ db, config, artifactsDir: acme.artifactsDir, setupRegistry });
      app = createApp({
        db,
        authenticator: new Authenticator(db),
        metrics: new ServerMetrics(),
        maxBodyBytes: 1 << 20,
        tenantRoutes: [
          {
            path: "/",
            app: runRoutes({ db, config, artifactsDir: acme.artifactsDir, maxBodyBytes: 1 << 20 }),
          },
        ],
      });
    });
    after(async () => {
      await orchestrator?.close();
      await db?.close();
    });

    const call = async (tenant: string, method: string, path: string, body?: unknown) => {
      const res = await app.request(`/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${keys[tenant]}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    it("queues a run, shows its progress and metrics per step once trained, and lists it with the orchestrator's status", async () => {
      const made = await call("acme", "POST", "/runs", { recipe: "toolcall-dpo", overrides: QUICK_RUN });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      const run = made.body as unknown as RunRecord;
      assert.equal(run.status, "queued");
      assert.equal(run.trigger, "api");
      assert.deepEqual(
        (await orchestrator.tick()).started.map((r) => r.id),
        [run.id],
      );
      await orchestrator.idle();
      const shown = await call("acme", "GET", `/runs/${run.id}`);
      const shownRun = shown.body.run as RunRecord;
      assert.equal(shownRun.status, "succeeded", shownRun.error ?? "");
      assert.equal(shownRun.step, 2);
      assert.deepEqual(
        (shown.body.records as { step: number }[]).map((r) => r.step),
        [0, 1, 2],
      );
      assert.equal(typeof shownRun.metrics.reward, "number");
      const listed = await call("acme", "GET", "/runs?status=succeeded");
      assert.deepEqual(
        (listed.body.data as RunRecord[]).map((r) => r.id),
        [run.id],
      );
      const status = listed.body.orchestrator as { enabled: boolean; reason: string };
      assert.equal(status.enabled, false);
      assert.match(status.reason, /off/);
    });

    it("cancels a queued run at once and a running one after its current step, with no candidate", async () => {
      const queued = (await call("acme", "POST", "/runs", { overrides: QUICK_RUN }))
        .body as unknown as RunRecord;
      const cancelled = await call("acme", "POST", `/runs/${queued.id}/cancel`);
      assert.equal((cancelled.body as unknown as RunRecord).status, "cancelled");
      assert.deepEqual((await orchestrator.tick()).started, [], "a cancelled run is never claimed");

      const long = (await call("acme", "POST", "/runs", { overrides: [...QUICK_RUN, "trainer.steps=200"] }))
        .body as unknown as RunRecord;
      await orchestrator.tick();
      await call("acme", "POST", `/runs/${long.id}/cancel`);
      await orchestrator.idle();
      const ended = (await call("acme", "GET", `/runs/${long.id}`)).body.run as RunRecord;
      assert.equal(ended.status, "cancelled", ended.error ?? "");
      assert.ok(ended.step < 200);
      assert.equal(ended.candidateId, null);
      const again = await call("acme", "POST", `/runs/${long.id}/cancel`);
      assert.equal(again.status, 400);
      assert.match(String((again.body.error as { message: string }).message), /only a queued or running run/);
    });

    it("refuses server-set overrides, unknown recipes and invalid recipe values with the field named", async () => {
      const model = await call("acme", "POST", "/runs", { overrides: ["model.path=/etc"] });
      assert.equal(model.status, 400);
      assert.match(
        String((model.body.error as { message: string }).message),
        /model\.path" is set by the server/,
      );
      const unknown = await call("acme", "POST", "/runs", { recipe: "nope" });
      assert.equal(unknown.status, 400);
      assert.match(String((unknown.body.error as { message: string }).message), /no shipped recipe "nope"/);
      const traversal = await call("acme", "POST", "/runs", { recipe: "../etc/passwd" });
      assert.equal(traversal.status, 400);
      const steps = await call("acme", "POST", "/runs", { overrides: ["trainer.steps=many"] });
      assert.equal(steps.status, 400);
      assert.match(JSON.stringify(steps.body), /trainer\.steps/);
    });

    it("keeps tenants apart: another tenant's run is not found, not listed and cannot be cancelled", async () => {
      const run = (await call("acme", "POST", "/runs", { overrides: QUICK_RUN }))
        .body as unknown as RunRecord;
      assert.equal((await call("globex", "GET", `/runs/${run.id}`)).status, 404);
      assert.equal((await call("globex", "POST", `/runs/${run.id}/cancel`)).status, 404);
      assert.deepEqual((await call("globex", "GET", "/runs")).body.data, []);
      assert.equal(((await call("acme", "GET", `/runs/${run.id}`)).body.run as RunRecord).status, "queued");
      await call("acme", "POST", `/runs/${run.id}/cancel`);
    });
  });
}
