import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { InvalidInputError, Trace } from "@arc/core";
import type { Database, Queryable } from "./database.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { getTrace } from "./trace-store.ts";
import { TraceWriter } from "./trace-writer.ts";

const startedAt = "2026-01-01T00:00:00.000Z";

/** A trace of `steps` tool steps. */
function trace(id: string, steps = 2): Trace {
  return Trace.parse({
    id,
    startedAt,
    status: "ok",
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `${id}-s${i}`,
      kind: "tool",
      name: "lookup",
      startedAt,
      output: { i },
    })),
  });
}

/** `db` with every statement it runs counted. */
function counting(db: Database): { db: Database; statements: () => number } {
  let statements = 0;
  const count = <T>(work: Promise<T>) => {
    statements++;
    return work;
  };
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => count(q.query(sql, params)),
    exec: (sql) => count(q.exec(sql)),
  });
  return {
    db: { ...db, ...wrap(db), transaction: (fn) => db.transaction((tx) => fn(wrap(tx))) },
    statements: () => statements,
  };
}

for (const target of databasesUnderTest()) {
  describe(`trace writer on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenantId: string;
    before(async () => {
      db = await target.open();
      tenantId = (await createTenant(db, "writer")).id;
    });
    after(async () => db?.close());

    it("joins batches that arrive while one is written into one statement, each caller told its own counts", async () => {
      const counted = counting(db);
      const writer = new TraceWriter(counted.db, { concurrency: 1 });
      const results = await Promise.all([
        writer.write(tenantId, [trace("a1"), trace("a2")]),
        writer.write(tenantId, [trace("b1", 3)]),
        writer.write(tenantId, [trace("c1", 1), trace("b1", 3)]),
        writer.write(tenantId, [trace("d1", 4)]),
      ]);
      assert.deepEqual(results, [
        { traces: 2, steps: 4 },
        { traces: 1, steps: 3 },
        // b1 again: merged into the stored trace, its steps already stored
        { traces: 1, steps: 1 },
        { traces: 1, steps: 4 },
      ]);
      // the first batch alone; b1 and d1 joined; c1 (re-sending b1) in a statement of its own after them
      assert.equal(counted.statements(), 3);
      assert.equal((await getTrace(db, tenantId, "d1")).steps.length, 4);
    });

    it("writes a joined batch's traces alone when their statement fails, so only the bad batch fails", async () => {
      const writer = new TraceWriter(db, { concurrency: 1 });
      const bad = trace("bad1");
      // a trace that PostgreSQL refuses: a NUL character in a text column
      (bad as { name?: string }).name = "nul \u0000 here";
      const outcomes = await Promise.allSettled([
        writer.write(tenantId, [trace("e1")]),
        writer.write(tenantId, [trace("f1")]),
        writer.write(tenantId, [bad]),
        writer.write(tenantId, [trace("g1")]),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ["fulfilled", "fulfilled", "rejected", "fulfilled"],
      );
      for (const id of ["e1", "f1", "g1"]) assert.equal((await getTrace(db, tenantId, id)).id, id);
    });

    it("refuses a batch that names one trace twice, as insertTraces does", async () => {
      await assert.rejects(
        new TraceWriter(db).write(tenantId, [trace("h1"), trace("h1")]),
        (error) => InvalidInputError.isInstance(error) && /appears twice/.test(error.message),
      );
    });
  });
}
