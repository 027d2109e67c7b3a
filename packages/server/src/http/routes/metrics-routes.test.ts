import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../store/database.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";
import { startTestAppServer, type TestAppServer } from "../test-app-server.ts";

for (const target of databasesUnderTest()) {
  describe(`GET /metrics on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let server: TestAppServer;
    const scrape = (key?: string) =>
      fetch(`${server.url}/metrics`, key ? { headers: { authorization: `Bearer ${key}` } } : {});

    before(async () => {
      db = await target.open();
      server = await startTestAppServer(db);
      server.metrics.watch({ db, gatewayTraceQueue: () => 0, requestsInFlight: () => 0 });
      for (const tenant of server.tenants) {
        const res = await fetch(`${server.url}/v1/traces`, {
          method: "POST",
          headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
          body: JSON.stringify({ traces: [{ id: `t-${tenant.name}`, startedAt: "2026-01-01T00:00:00Z" }] }),
        });
        assert.equal(res.status, 200);
        server.metrics.gatewayTokens.inc({ tenant: tenant.id, model: "m", kind: "prompt" }, 7);
      }
    });
    after(async () => {
      await server?.close();
      await db?.close();
    });

    it("shows a scrape without a key the process's series only: no tenant id, no per-tenant series", async () => {
      const res = await scrape();
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      assert.match(text, /^process_cpu_user_seconds_total \d/m);
      assert.match(text, /^arc_ingested_traces_total\{source="api"\} 2$/m);
      assert.match(text, /^arc_http_requests_in_flight 0$/m);
      for (const tenant of server.tenants) assert.ok(!text.includes(tenant.id), `${tenant.id} in\n${text}`);
      assert.doesNotMatch(text, /tenant=/);
      assert.doesNotMatch(text, /^# TYPE arc_(gateway_tokens_total|detection_queue_depth|runs_queued) /m);
    });

    it("shows an admin key the process's series and every tenant's", async () => {
      const res = await scrape(server.adminKey);
      assert.equal(res.status, 200);
      const text = await res.text();
      assert.match(text, /^process_cpu_user_seconds_total \d/m);
      for (const tenant of server.tenants) {
        assert.match(text, new RegExp(`^arc_detection_queue_depth\\{tenant="${tenant.id}"\\} 1$`, "m"));
        assert.match(
          text,
          new RegExp(`^arc_gateway_tokens_total\\{tenant="${tenant.id}",model="m",kind="prompt"\\} 7$`, "m"),
        );
      }
    });

    it("refuses any other key rather than serve it either page", async () => {
      const tenantKey = await scrape(server.tenants[0].key);
      assert.equal(tenantKey.status, 403);
      assert.match((await tenantKey.json()).error.message, /needs an admin key/);
      const unknown = await scrape("arc_admin_not-a-real-key");
      assert.equal(unknown.status, 401);
      assert.match((await unknown.json()).error.message, /unknown or revoked/);
    });
  });
}
