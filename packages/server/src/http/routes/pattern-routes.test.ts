import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../../store/database.ts";
import { databasesUnderTest } from "../../store/test-databases.ts";
import { startTestAppServer, type TestAppServer } from "../test-app-server.ts";
import { patternRoutes } from "./pattern-routes.ts";

for (const target of databasesUnderTest()) {
  describe(`PUT /v1/detectors on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let server: TestAppServer;
    const detectors = async (method: "GET" | "PUT", body?: unknown) => {
      const res = await fetch(`${server.url}/v1/detectors`, {
        method,
        headers: { authorization: `Bearer ${server.tenants[0].key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    };

    before(async () => {
      db = await target.open();
      const maxBodyBytes = 1 << 20;
      server = await startTestAppServer(db, {
        maxBodyBytes,
        tenantRoutes: [{ path: "/", app: patternRoutes({ db, maxBodyBytes }) }],
      });
    });
    after(async () => {
      await server?.close();
      await db?.close();
    });

    it("refuses a setting it does not have, naming it and the settings there are, and changes nothing", async () => {
      const before = (await detectors("GET")).body.config;
      for (const body of [{ bogus: 1 }, { latencyBudgetMs: 5000, latencyBudgetMS: 9000 }]) {
        const res = await detectors("PUT", body);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        const unknown = Object.keys(body).find((k) => k !== "latencyBudgetMs") as string;
        assert.equal(res.body.error.field, unknown);
        assert.match(
          res.body.error.message,
          new RegExp(`^${unknown}: not a field of the detection settings`),
        );
        assert.match(res.body.error.message, /its fields are disabled, latencyBudgetMs, loopThreshold/);
      }
      assert.deepEqual((await detectors("GET")).body.config, before);
    });

    it("takes the settings it has, and keeps the ones a request leaves out", async () => {
      const first = await detectors("PUT", { latencyBudgetMs: 5000 });
      assert.equal(first.status, 200);
      const second = await detectors("PUT", { loopThreshold: 4 });
      assert.equal(second.status, 200);
      assert.equal(second.body.config.latencyBudgetMs, 5000);
      assert.equal(second.body.config.loopThreshold, 4);
    });
  });
}
