import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { serve } from "@hono/node-server";
import { AnswerBookEngine } from "../deploy/__fixtures__/answer-book-engine.ts";
import { startCanary } from "../deploy/deployment-store.ts";
import { saveDataset } from "../failures/dataset-store.ts";
import { upsertVerdicts } from "../failures/verdict-store.ts";
import { ModelPool } from "../gateway/model-pool.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import { createFailureService, type FailureService } from "../serve/failure-service.ts";
import { createReleaseService, type ReleaseService } from "../serve/release-service.ts";
import { tenantRoutes } from "../serve/tenant-routes.ts";
import type { Database } from "../store/database.ts";
import { createApiKey } from "../store/keys.ts";
import { registerModelVersion, transitionModelVersion } from "../store/model-registry.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { createApp } from "./app.ts";
import { Authenticator } from "./authenticator.ts";

/** Everything of tenant B's that A's key must neither see nor change, as one snapshot of its rows. */
async function snapshot(db: Database, tenantId: string): Promise<string> {
  const tables = [
    "model_versions",
    "deployments",
    "release_settings",
    "traces",
    "datasets",
    "verdicts",
    "audit_log",
  ];
  const parts: unknown[] = [];
  for (const t of tables) {
    parts.push(await db.query(`select * from ${t} where tenant_id = $1 order by 1, 2`, [tenantId]));
  }
  return JSON.stringify(parts);
}

for (const target of databasesUnderTest()) {
  describe(`tenant isolation on every tenant route on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let release: ReleaseService;
    let failures: FailureService;
    let server: ReturnType<typeof serve>;
    let url: string;
    let aKey: string;
    /** ARC_HOME of the release routes: tenant A's checkpoint `x` is under its artifacts. */
    const home = mkdtempSync(join(tmpdir(), "arc-cross-tenant-"));
    let b: {
      id: string;
      key: string;
      production: string;
      candidate: string;
      deployment: string;
      trace: string;
      dataset: string;
    };

    before(async () => {
      db = await target.open();
      const pool = new ModelPool({ loadEngine: async () => new AnswerBookEngine(new Map(), "b's answer") });
      release = createReleaseService({ db, workers: false, pool });
      failures = await createFailureService({ db, env: {} });
      const app = createApp({
        db,
        authenticator: new Authenticator(db),
        metrics: new ServerMetrics(),
        maxBodyBytes: 1 << 20,
        tenantRoutes: tenantRoutes({
          db,
          maxBodyBytes: 1 << 20,
          release: { service: release, registration: { home, upstreams: {} } },
          failures,
        }),
      });
      server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 });
      await new Promise((r) => server.once("listening", r));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

      const a = await createTenant(db, "tenant-a");
      aKey = (await createApiKey(db, { role: "tenant", tenantId: a.id })).key;
      mkdirSync(join(home, "artifacts", a.id, "x"), { recursive: true });
      writeFileSync(join(home, "artifacts", a.id, "x", "config.json"), "{}");
      const bt = await createTenant(db, "tenant-b");
      const bKey = (await createApiKey(db, { role: "tenant", tenantId: bt.id })).key;
      const production = await registerModelVersion(db, bt.id, {
        name: "b-prod",
        status: "promoted",
        artifactDir: "/b/prod",
        actor: "t",
      });
      const candidate = await registerModelVersion(db, bt.id, {
        name: "b-cand",
        artifactDir: "/b/c",
        actor: "t",
      });
      await transitionModelVersion(db, bt.id, candidate.id, {
        from: ["candidate"],
        to: "validated",
        actor: "t",
        action: "validate",
      });
      const dep = await startCanary(db, bt.id, { candidate: candidate.id, actor: "t" });
      const trace = "b-trace-1";
      const posted = await fetch(`${url}/v1/traces`, {
        method: "POST",
        headers: { authorization: `Bearer ${bKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          traces: [{ id: trace, name: "b", startedAt: "2026-05-01T10:00:00Z", status: "ok", steps: [] }],
        }),
      });
      assert.ok(posted.ok, await posted.text());
      await upsertVerdicts(db, bt.id, [
        {
          traceId: trace,
          judgement: { traceId: trace, status: "passed", verdicts: [] },
          patternId: null,
          modelVersion: null,
        },
      ]);
      const { dataset } = await saveDataset(
        db,
        {
          kind: "eval",
          tenantId: bt.id,
          version: "sha256:b-only",
          createdFrom: { seed: 0, patternIds: [], params: {} },
          rows: [
            {
              id: "r1",
              question: "q",
              solution: 1,
              env: "toolcall",
              meta: { sourceTraceIds: [trace], slice: "general" },
            },
          ],
          stats: {},
        },
        "t",
      );
      b = {
        id: bt.id,
        key: bKey,
        production: production.id,
        candidate: candidate.id,
        deployment: dep.id,
        trace,
        dataset: dataset.id,
      };
    });
    after(async () => {
      await new Promise<void>((r) => server?.close(() => r()));
      await release?.close();
      await failures?.close();
      await db?.close();
      rmSync(home, { recursive: true, force: true });
    });

    /** Each of B's things, addressed with A's key: the method, the path and (for writes) a body. */
    const routes = (): [string, string, unknown?][] => [
      ["GET", `/model-versions/${b.production}`],
      ["GET", `/model-versions/b-prod`],
      ["POST", `/model-versions/${b.candidate}/validate`],
      ["POST", `/model-versions/${b.candidate}/approve`],
      ["GET", `/deployments/${b.deployment}`],
      ["POST", `/deployments/${b.deployment}/promote`, { reason: "a's key" }],
      ["POST", `/deployments/${b.deployment}/rollback`, { reason: "a's key" }],
      ["POST", "/deployments", { candidate: b.candidate }],
      ["POST", "/model-versions", { name: "child", artifactDir: "x", parentId: b.production }],
      ["GET", `/traces/${b.trace}`],
      ["GET", `/verdicts?traceId=${b.trace}`],
      ["GET", `/datasets/${b.dataset}`],
      ["GET", `/datasets/${b.dataset}/export?format=jsonl`],
      ["GET", "/patterns/pat_does_not_matter"],
    ];

    it("answers 404 to tenant A's key for each of tenant B's ids, and changes nothing of B's", async () => {
      const before = await snapshot(db, b.id);
      const wrong: string[] = [];
      for (const [method, path, body] of routes()) {
        const res = await fetch(`${url}/v1${path}`, {
          method,
          headers: { authorization: `Bearer ${aKey}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        if (res.status !== 404) wrong.push(`${method} ${path}: ${res.status} ${text}`);
      }
      assert.deepEqual(wrong, []);
      assert.equal(await snapshot(db, b.id), before);
    });

    it("refuses A's key that names B in the arc-tenant header; an admin key naming B sees B's things", async () => {
      const before = await snapshot(db, b.id);
      const adminKey = (await createApiKey(db, { role: "admin" })).key;
      const call = (key: string, tenant: string, path: string, method = "GET") =>
        fetch(`${url}/v1${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            "arc-tenant": tenant,
            "content-type": "application/json",
          },
          body: method === "POST" ? JSON.stringify({ reason: "a's key" }) : undefined,
        });
      for (const [method, path] of routes()) {
        const res = await call(aKey, b.id, path, method);
        assert.equal(res.status, 403, `${method} ${path}`);
        assert.match(
          (await res.json()).error.message,
          /arc-tenant: a tenant key acts for its own tenant only/,
        );
      }
      assert.equal(await snapshot(db, b.id), before);
      const asB = await call(adminKey, "tenant-b", `/model-versions/${b.production}`);
      assert.equal(asB.status, 200);
      assert.equal((await asB.json()).model.id, b.production);
      const noTenant = await call(adminKey, "tenant-nobody", "/model-versions");
      assert.equal(noTenant.status, 404);
      assert.match((await noTenant.json()).error.message, /arc-tenant: no tenant "tenant-nobody"/);
      const bare = await fetch(`${url}/v1/model-versions`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      assert.equal(bare.status, 403);
      assert.match((await bare.json()).error.message, /or an admin key with the header 'arc-tenant/);
    });

    it("shows tenant A none of B's things in its lists, settings, verdicts and gateway", async () => {
      const get = async (path: string) => {
        const res = await fetch(`${url}/v1${path}`, { headers: { authorization: `Bearer ${aKey}` } });
        assert.equal(res.status, 200, `${path}: ${res.status}`);
        return res.text();
      };
      for (const path of [
        "/model-versions",
        "/deployments",
        "/release-settings",
        "/traces",
        "/datasets",
        "/patterns",
        "/detectors",
        "/models",
        "/teaching",
      ]) {
        const text = await get(path);
        for (const id of [b.production, b.candidate, b.deployment, b.trace, b.dataset]) {
          assert.ok(!text.includes(id), `${path} shows B's ${id}: ${text}`);
        }
      }
    });

    it("does not let tenant A's chat call pin tenant B's model version", async () => {
      const before = await snapshot(db, b.id);
      for (const model of [b.production, b.candidate]) {
        const res = await fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${aKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }),
        });
        const text = await res.text();
        assert.ok(!text.includes("b's answer"), `A's call reached B's model ${model}: ${text}`);
        assert.ok(res.status >= 400, `${model}: ${res.status}`);
      }
      await release.gateway.flush();
      assert.equal(await snapshot(db, b.id), before);
    });
  });
}
