import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Database } from "../store/database.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { startTestAppServer, type TestAppServer } from "./test-app-server.ts";

const pglite = databasesUnderTest()[0];

describe("the NUL character, which PostgreSQL cannot store", () => {
  let db: Database;
  let server: TestAppServer;
  before(async () => {
    db = await pglite.open();
    server = await startTestAppServer(db);
  });
  after(async () => {
    await server?.close();
    await db?.close();
  });
  const post = (body: string) =>
    fetch(`${server.url}/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.tenants[0].key}`, "content-type": "application/json" },
      body,
    });
  const trace = (extra: string) => `{"traces":[{"id":"nul-1","startedAt":"2026-01-01T00:00:00Z"${extra}}]}`;

  it("is refused in a string value with a 400 naming the field, and nothing is stored", async () => {
    const res = await post(trace(',"name":"a\\u0000b"'));
    assert.equal(res.status, 400);
    const error = (await res.json()).error;
    assert.equal(error.field, "traces.0.name");
    assert.match(error.message, /traces\.0\.name: contains the NUL character/);
    const rows = await db.query("select 1 from traces where id = 'nul-1'");
    assert.equal(rows.length, 0);
  });

  it("is refused in an object key, naming the path", async () => {
    const res = await post(trace(',"metadata":{"k\\u0000":1}'));
    assert.equal(res.status, 400);
    assert.match(
      (await res.json()).error.message,
      /traces\.0\.metadata\.k\u0000: contains the NUL character/,
    );
  });

  it("is refused in a query parameter with a 400, not a server error", async () => {
    const res = await fetch(`${server.url}/v1/traces?q=%00`, {
      headers: { authorization: `Bearer ${server.tenants[0].key}` },
    });
    assert.equal(res.status, 400);
    assert.match((await res.json()).error.message, /NUL character/);
  });

  it("lets an escaped backslash followed by u0000 through as the plain text it is", async () => {
    const res = await post(trace(',"name":"a\\\\u0000b"'));
    assert.equal(res.status, 200);
  });
});
