import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../store/database.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { startTestAppServer, type TestAppServer } from "./test-app-server.ts";

function trace(id: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    name: "lookup-order",
    startedAt: "2026-05-01T10:00:00Z",
    status: "ok",
    steps: [
      {
        id: `${id}-llm`,
        kind: "llm",
        startedAt: "2026-05-01T10:00:00Z",
        llm: {
          modelRequested: "arc-small",
          messages: [{ role: "user", content: "where is order 12?" }],
          output: { content: "It shipped." },
          finishReason: "stop",
        },
      },
    ],
    ...overrides,
  };
}

for (const target of databasesUnderTest()) {
  describe(`ingest API on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let server: TestAppServer;
    let acme: TestAppServer["tenants"][number];
    let globex: TestAppServer["tenants"][number];

    const call = (path: string, key: string | null, init: RequestInit & { json?: unknown } = {}) => {
      const headers = new Headers(init.headers);
      if (key) headers.set("authorization", `Bearer ${key}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set("content-type", "application/json");
        body = JSON.stringify(init.json);
      }
      return fetch(`${server.url}${path}`, { ...init, headers, body });
    };
    const traceCount = async (tenantId: string) =>
      (
        await db.query<{ n: number }>("select count(*)::int as n from traces where tenant_id = $1", [
          tenantId,
        ])
      )[0].n;

    before(async () => {
      db = await target.open();
      server = await startTestAppServer(db, { maxBodyBytes: 64 * 1024 });
      [acme, globex] = server.tenants;
    });
    after(async () => {
      await server?.close();
      await db?.close();
    });

    it("answers /health with the database in use", async () => {
      const res = await call("/health", null);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { status: "ok", database: target.name });
    });

    it("acknowledges a batch with what it stored, and a re-sent batch stores nothing twice", async () => {
      const batch = { traces: [trace("a-1"), trace("a-2")] };
      const first = await call("/v1/traces", acme.key, { method: "POST", json: batch });
      assert.equal(first.status, 200);
      assert.deepEqual(await first.json(), {
        received: { traces: 2, steps: 2 },
        inserted: { traces: 2, steps: 2 },
      });
      const again = await call("/v1/traces", acme.key, { method: "POST", json: batch });
      assert.deepEqual((await again.json()).inserted, { traces: 0, steps: 0 });
      const got = await (await call("/v1/traces/a-1", acme.key)).json();
      assert.equal(got.steps[0].llm.output.content, "It shipped.");
    });

    it("refuses requests without a key, with an unknown key, or with a revoked key", async () => {
      assert.equal((await call("/v1/traces", null)).status, 401);
      const unknown = await call("/v1/traces", "arc_sk_not-a-real-key");
      assert.equal(unknown.status, 401);
      assert.match((await unknown.json()).error.message, /unknown or revoked/);
      const made = await (
        await call(`/v1/admin/tenants/acme/keys`, server.adminKey, { method: "POST" })
      ).json();
      assert.equal((await call("/v1/traces", made.key)).status, 200);
      assert.equal(
        (await call(`/v1/admin/keys/${made.id}`, server.adminKey, { method: "DELETE" })).status,
        200,
      );
      assert.equal((await call("/v1/traces", made.key)).status, 401);
    });

    it("refuses a field a tenant or key request does not have, so no key is made other than asked", async () => {
      const post = (path: string, json: unknown) => call(path, server.adminKey, { method: "POST", json });
      const role = await post(`/v1/admin/tenants/${acme.name}/keys`, { name: "ci", role: "admin" });
      assert.equal(role.status, 400);
      const error = (await role.json()).error;
      assert.equal(error.field, "role");
      assert.match(error.message, /^role: not a field of a key request; its fields are name$/);
      const tenant = await post("/v1/admin/tenants", { name: "initech", plan: "gold" });
      assert.equal(tenant.status, 400);
      assert.equal((await tenant.json()).error.field, "plan");
      const keys = await (await call(`/v1/admin/tenants/${acme.name}/keys`, server.adminKey)).json();
      assert.ok(keys.data.every((k: { name: string }) => k.name !== "ci"));
      const tenants = await (await call("/v1/admin/tenants", server.adminKey)).json();
      assert.ok(tenants.data.every((t: { name: string }) => t.name !== "initech"));
    });

    it("keeps admin keys off tenant data and tenant keys off admin endpoints", async () => {
      assert.equal((await call("/v1/traces", server.adminKey)).status, 403);
      assert.equal((await call("/v1/admin/tenants", acme.key)).status, 403);
      assert.equal(
        (await call("/v1/admin/tenants", acme.key, { method: "POST", json: { name: "evil" } })).status,
        403,
      );
      assert.equal(
        (await call(`/v1/admin/tenants/${globex.name}/keys`, acme.key, { method: "POST" })).status,
        403,
      );
    });

    it("lets no tenant key reach another tenant's data on any endpoint", async () => {
      await call("/v1/traces", globex.key, { method: "POST", json: { traces: [trace("g-secret")] } });
      assert.equal((await call("/v1/traces/g-secret", acme.key)).status, 404);
      const listed = await (await call("/v1/traces?limit=500", acme.key)).json();
      assert.ok(listed.data.every((t: { id: string }) => t.id !== "g-secret"));
      const searched = await (await call("/v1/traces?q=order", acme.key)).json();
      assert.ok(searched.data.every((t: { id: string }) => t.id !== "g-secret"));
      const feedback = await call("/v1/feedback", acme.key, {
        method: "POST",
        json: { id: "fb-cross", traceId: "g-secret", score: 0 },
      });
      assert.equal(feedback.status, 404);
      // The same id sent by acme is acme's own trace, not a write into globex's.
      await call("/v1/traces", acme.key, {
        method: "POST",
        json: { traces: [trace("g-secret", { name: "mine" })] },
      });
      const globexCopy = await (await call("/v1/traces/g-secret", globex.key)).json();
      assert.equal(globexCopy.name, "lookup-order");
      assert.deepEqual(globexCopy.feedback, []);
      const otlp = await call("/v1/otlp/v1/traces", acme.key, {
        method: "POST",
        json: { resourceSpans: [] },
      });
      assert.equal(otlp.status, 200);
      assert.equal((await call("/v1/traces/g-secret", globex.key)).status, 200);
    });

    it("rejects malformed JSON, wrong types, missing ids and invalid UTF-8 with a message naming the problem", async () => {
      const before = await traceCount(acme.id);
      const malformed = await call("/v1/traces", acme.key, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"traces": [',
      });
      assert.equal(malformed.status, 400);
      assert.match((await malformed.json()).error.message, /not valid JSON/);

      const wrongType = await call("/v1/traces", acme.key, {
        method: "POST",
        json: { traces: [trace("bad-1"), trace("bad-2", { startedAt: 12 })] },
      });
      assert.equal(wrongType.status, 400);
      const wrongTypeError = (await wrongType.json()).error;
      assert.equal(wrongTypeError.field, "traces.1.startedAt");
      assert.match(wrongTypeError.message, /traces\.1\.startedAt/);

      const { id: _dropped, ...noId } = trace("x");
      const missingId = await call("/v1/traces", acme.key, { method: "POST", json: { traces: [noId] } });
      assert.match((await missingId.json()).error.message, /traces\.0\.id: Required/);

      const badUtf8 = await call("/v1/traces", acme.key, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
      });
      assert.equal(badUtf8.status, 400);
      assert.match((await badUtf8.json()).error.message, /not valid UTF-8/);

      const notJson = await call("/v1/traces", acme.key, {
        method: "POST",
        body: "traces=1",
        headers: { "content-type": "text/plain" },
      });
      assert.equal(notJson.status, 415);
      assert.equal(await traceCount(acme.id), before, "nothing from a rejected request is stored");
    });

    it("refuses an oversize body with 413 and stores none of it", async () => {
      const before = await traceCount(acme.id);
      const big = { traces: [trace("huge", { input: "x".repeat(70 * 1024) })] };
      const res = await call("/v1/traces", acme.key, { method: "POST", json: big });
      assert.equal(res.status, 413);
      assert.match((await res.json()).error.message, /exceeds the limit of 65536 bytes/);
      assert.equal(await traceCount(acme.id), before);
    });

    it("rejects a whole batch when one trace in it is invalid", async () => {
      const res = await call("/v1/traces", acme.key, {
        method: "POST",
        json: { traces: [trace("whole-1"), trace("whole-2", { steps: [{ id: "s", kind: "nope" }] })] },
      });
      assert.equal(res.status, 400);
      assert.equal((await call("/v1/traces/whole-1", acme.key)).status, 404);
    });

    it("takes feedback on a trace and a step, and shows it with the trace", async () => {
      await call("/v1/traces", acme.key, { method: "POST", json: { traces: [trace("fb-1")] } });
      const res = await call("/v1/feedback", acme.key, {
        method: "POST",
        json: [
          { id: "fb-a", traceId: "fb-1", score: -1, label: "wrong_answer" },
          { id: "fb-b", traceId: "fb-1", stepId: "fb-1-llm", correction: "It is in Lyon." },
        ],
      });
      assert.deepEqual(await res.json(), { created: 2, received: 2 });
      const empty = await call("/v1/feedback", acme.key, {
        method: "POST",
        json: { id: "fb-c", traceId: "fb-1" },
      });
      assert.equal(empty.status, 400);
      assert.match((await empty.json()).error.message, /at least one of score, label or correction/);
      const got = await (await call("/v1/traces/fb-1", acme.key)).json();
      assert.deepEqual(
        got.feedback.map((f: { id: string }) => f.id),
        ["fb-a", "fb-b"],
      );
    });

    it("validates list filters and pages with a cursor", async () => {
      const bad = await call("/v1/traces?from=yesterday", acme.key);
      assert.equal(bad.status, 400);
      assert.match((await bad.json()).error.message, /from: must be an ISO 8601 date-time/);
      const yearZero = await call("/v1/traces?to=0000-12-31T00:00:00Z", acme.key);
      assert.equal(yearZero.status, 400);
      assert.equal((await yearZero.json()).error.field, "to");
      const typo = await call("/v1/traces?form=2026-01-01T00:00:00Z", acme.key);
      assert.equal(typo.status, 400);
      assert.match((await typo.json()).error.message, /Unrecognized key\(s\) in object: 'form'/);
      const badCursor = await call("/v1/traces?cursor=zzz", acme.key);
      assert.match((await badCursor.json()).error.message, /cursor: not a cursor this server made/);
      const first = await (await call("/v1/traces?limit=1", acme.key)).json();
      assert.equal(first.data.length, 1);
      const second = await (await call(`/v1/traces?limit=1&cursor=${first.nextCursor}`, acme.key)).json();
      assert.notEqual(second.data[0].id, first.data[0].id);
    });

    it("counts ingested steps and rejections in /metrics", async () => {
      const text = await (await call("/metrics", null)).text();
      assert.match(text, /arc_ingested_steps_total\{source="api"\} \d+/);
      assert.match(text, /arc_ingest_rejected_total\{reason="malformed_json"\} [1-9]/);
      assert.match(
        text,
        /arc_http_request_duration_seconds_bucket\{le="\+Inf",route="\/v1\/traces",[^}]*\} \d+/,
      );
    });
  });
}

for (const target of databasesUnderTest()) {
  describe(`/health when the ${target.name} database cannot answer`, { skip: target.skip }, () => {
    it("answers 503 naming the database's error instead of a bare 500", async () => {
      const db = await target.open();
      const server = await startTestAppServer(db);
      try {
        await db.close();
        const res = await fetch(`${server.url}/health`);
        assert.equal(res.status, 503);
        const body = (await res.json()) as { status: string; database: string; error: string };
        assert.equal(body.status, "unavailable");
        assert.equal(body.database, target.name);
        assert.ok(body.error.length > 0);
      } finally {
        await server.close();
      }
    });
  });
}
