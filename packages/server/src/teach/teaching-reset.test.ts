import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { savePatterns } from "../failures/pattern-store.ts";
import { type ReleaseTestServer, startReleaseTestServer } from "../serve/__fixtures__/release-test-server.ts";
import type { Database } from "../store/database.ts";
import { registerModelVersion } from "../store/model-registry.ts";
import { databasesUnderTest } from "../store/test-databases.ts";

for (const dbUnderTest of databasesUnderTest()) {
  describe(`POST /v1/teaching/patterns/:id/reset (${dbUnderTest.name})`, { skip: dbUnderTest.skip }, () => {
    let db: Database;
    let server: ReleaseTestServer;
    let other: ReleaseTestServer;

    before(async () => {
      db = await dbUnderTest.open();
      server = await startReleaseTestServer(db, { startWorkers: false });
      other = await startReleaseTestServer(db, { startWorkers: false });
      await registerModelVersion(db, server.tenantId, {
        name: "teacher",
        artifactDir: "/teacher",
        actor: "test",
      });
      const pattern = (tenantId: string, id: string) => ({
        id,
        tenantId,
        key: `refusal|${id}|`,
        class: "refusal" as const,
        label: `refusal: ${id}`,
        count: 1,
        firstSeen: "2026-01-01T00:00:00.000Z",
        lastSeen: "2026-01-01T00:00:00.000Z",
        countsByDay: {},
        countsByModelVersion: {},
        countsByEnv: {},
        examples: [],
        topTerms: [],
      });
      await savePatterns(db, server.tenantId, [pattern(server.tenantId, "p-stored")]);
      await savePatterns(db, other.tenantId, [pattern(other.tenantId, "p-other-tenant")]);
    });

    after(async () => {
      await server?.close();
      await other?.close();
      await db?.close();
    });

    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${server.url}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const reset = (id: string) => call("POST", `/teaching/patterns/${encodeURIComponent(id)}/reset`);

    it("answers 404 naming the id for a pattern that does not exist, also another tenant's", async () => {
      for (const id of ["no-such-pattern", "p-other-tenant"]) {
        const res = await reset(id);
        assert.equal(res.status, 404, id);
        const body = (await res.json()) as { error: { type: string; message: string } };
        assert.equal(body.error.type, "not_found");
        assert.match(body.error.message, new RegExp(`"${id}"`));
      }
    });

    it("resets a failure pattern of the tenant, and a pattern its teaching config lists", async () => {
      assert.equal((await reset("p-stored")).status, 200);
      const put = await call("PUT", "/teaching", { teacher: "teacher", patterns: ["booking"] });
      assert.equal(put.status, 200);
      assert.equal((await reset("booking")).status, 200);
      assert.equal((await reset("not-listed")).status, 404);
    });
  });
}
