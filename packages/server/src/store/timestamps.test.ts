import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { parseTraceBatch } from "@arc/core";
import type { Database } from "./database.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { getTrace, insertTraces, listTraces } from "./trace-store.ts";

/** Instants at the edges of what ingest takes, the first century among them, each as it reads back (UTC, ms). */
const instants = [
  "0001-01-01T00:00:00.000Z",
  "0050-06-15T12:34:56.789Z",
  "0099-12-31T23:59:59.999Z",
  "0100-01-01T00:00:00.000Z",
  "1949-12-31T23:59:59.999Z",
  "1969-12-31T23:59:59.999Z",
  "2049-01-01T00:00:00.000Z",
  "9999-12-31T23:59:59.999Z",
];

for (const target of databasesUnderTest()) {
  describe(`timestamps on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenantId: string;
    before(async () => {
      db = await target.open();
      tenantId = (await createTenant(db, "acme")).id;
    });
    after(async () => {
      await db?.close();
    });

    it("reads back every instant a trace may carry as it was ingested, the years 0001-0099 included", async () => {
      const { traces } = parseTraceBatch({
        traces: instants.map((at, i) => ({
          id: `t-${i}`,
          startedAt: at,
          endedAt: at,
          steps: [{ id: "s", kind: "custom", startedAt: at, endedAt: at }],
        })),
      });
      await insertTraces(db, tenantId, traces);
      for (const [i, at] of instants.entries()) {
        const trace = await getTrace(db, tenantId, `t-${i}`);
        assert.deepEqual(
          [trace.startedAt, trace.endedAt, trace.steps[0].startedAt, trace.steps[0].endedAt],
          [at, at, at, at],
        );
      }
      const listed = await listTraces(db, tenantId, { limit: 500 });
      assert.deepEqual(listed.data.map((t) => t.startedAt).sort(), [...instants].sort());
    });

    it("reads an offset, a BC timestamp, a date and their arrays as node-postgres does", async () => {
      const [row] = await db.query<Record<string, unknown>>(
        `select '0050-01-01 05:30:00+05:30'::timestamptz as offset_at,
                '0001-12-31 23:00:00+00 BC'::timestamptz as bc,
                '0012-03-04'::date as day,
                array['0099-12-31T23:59:59.5Z'::timestamptz] as list`,
      );
      assert.equal((row.offset_at as Date).toISOString(), "0050-01-01T00:00:00.000Z");
      assert.equal((row.bc as Date).toISOString(), "0000-12-31T23:00:00.000Z");
      assert.equal((row.day as Date).getFullYear(), 12);
      assert.deepEqual(
        (row.list as Date[]).map((d) => d.toISOString()),
        ["0099-12-31T23:59:59.500Z"],
      );
    });
  });
}
