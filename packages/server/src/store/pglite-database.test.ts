import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { waitUntil } from "@arc/core/testing";
import { openPgliteDatabase } from "./pglite-database.ts";

/** SQL for a jsonb value nested `depth` objects deep, built by PostgreSQL so the test itself sends nothing deep. */
const deepJsonb = (depth: number) => `(repeat('{"a":', ${depth}) || '1' || repeat('}', ${depth}))::jsonb`;

/** How deep `{a: {a: ... 1}}` goes, counted without recursion. */
function depthOf(value: unknown): number {
  let depth = 0;
  for (let v = value; typeof v === "object" && v !== null; v = (v as { a: unknown }).a) depth++;
  return depth;
}

/** A test fails rather than hangs: every case here once hung the embedded database for good. */
const bounded = { timeout: 60_000 };

describe("the embedded database's worker thread", () => {
  it("reads json nested deeper than a structured clone between threads can carry", bounded, async () => {
    const db = await openPgliteDatabase("memory://");
    try {
      const [row] = await db.query<{ doc: unknown }>(`select ${deepJsonb(5_000)} as doc`);
      assert.equal(depthOf(row.doc), 5_000);
      const [inTx] = await db.transaction((tx) =>
        tx.query<{ doc: unknown }>(`select ${deepJsonb(3_000)} as doc`),
      );
      assert.equal(depthOf(inTx.doc), 3_000);
      assert.deepEqual(await db.query("select '\"text\"'::jsonb as s, null::jsonb as n, '[1]'::json as j"), [
        { s: "text", n: null, j: [1] },
      ]);
    } finally {
      await db.close();
    }
  });

  it(
    "fails a query whose reply cannot be read on the main thread, and answers the next one",
    bounded,
    async () => {
      const db = await openPgliteDatabase("memory://");
      try {
        // jsonb[] is parsed on the PGlite thread, so this reply reaches the main thread as a deep structured clone.
        await assert.rejects(
          db.query(`select array[${deepJsonb(5_000)}] as docs`),
          /could not be read on the main thread/,
        );
        assert.deepEqual(await db.query("select 1 as one"), [{ one: 1 }]);
      } finally {
        await db.close();
      }
    },
  );

  it(
    "fails a query whose reply cannot be sent from its thread, and the thread lives on",
    bounded,
    async () => {
      const db = await openPgliteDatabase("memory://");
      try {
        await assert.rejects(
          db.query(`select array[${deepJsonb(20_000)}] as docs`),
          /could not be passed to the main thread/,
        );
        assert.deepEqual(await db.query("select 1 as one"), [{ one: 1 }]);
      } finally {
        await db.close();
      }
    },
  );

  it(
    "fails a statement past its deadline and rolls its transaction back; others fail at once until it ends",
    bounded,
    async () => {
      const db = await openPgliteDatabase("memory://", { queryTimeoutMs: 1_000 });
      try {
        await db.exec("create table t (n int)");
        await assert.rejects(
          db.transaction(async (tx) => {
            await tx.query("insert into t values (1)");
            await tx.query("select pg_sleep(6)");
          }),
          /did not answer the statement "select pg_sleep\(6\)" within 1000 ms/,
        );
        await assert.rejects(db.query("select 1"), /busy: the statement "select pg_sleep\(6\)" has run past/);
        await waitUntil(
          () => db.query("select count(*)::int as n from t").catch(() => null),
          "the late statement to end",
          { timeoutMs: 30_000, intervalMs: 100 },
        );
        await db.transaction((tx) => tx.query("insert into t values (2)"));
        assert.deepEqual(await db.query("select n from t"), [{ n: 2 }]);
      } finally {
        await db.close();
      }
    },
  );

  it("closes while a statement is stuck, and fails that statement", bounded, async () => {
    const db = await openPgliteDatabase("memory://", { queryTimeoutMs: 1_000 });
    const stuck = db.query("select pg_sleep(600)");
    await assert.rejects(stuck, /within 1000 ms/);
    await assert.rejects(db.close(), /did not close cleanly .*its thread was stopped/);
    await assert.rejects(db.query("select 1"), /the embedded database is closed/);
  });

  it(
    "keeps what was committed when it closes by stopping a stuck thread, and opens again",
    bounded,
    async () => {
      const home = mkdtempSync(join(tmpdir(), "arc-pglite-"));
      const dir = join(home, "data");
      try {
        const db = await openPgliteDatabase(dir, { queryTimeoutMs: 2_000 });
        await db.exec("create table t (n int)");
        await db.query("insert into t values (1)");
        await assert.rejects(db.query("select pg_sleep(600)"), /within 2000 ms/);
        await assert.rejects(db.close(), /its thread was stopped/);
        const reopened = await openPgliteDatabase(dir);
        try {
          assert.deepEqual(await reopened.query("select n from t"), [{ n: 1 }]);
        } finally {
          await reopened.close();
        }
      } finally {
        rmSync(home, { recursive: true, force: true });
      }
    },
  );

  it("closes while a transaction holds the lock and never ends", bounded, async () => {
    const db = await openPgliteDatabase("memory://", { queryTimeoutMs: 1_000 });
    void db.transaction(() => new Promise(() => {}));
    await assert.rejects(db.close(), /closing waited 1000 ms/);
  });
});
