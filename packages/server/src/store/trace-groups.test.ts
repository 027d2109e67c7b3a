import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import type { Database } from "./database.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { listTraceGroups } from "./trace-groups.ts";
import { insertTraces } from "./trace-store.ts";

/** Trace `i` of twelve, started i minutes after 10:00: session `s<i % 4>`, user `u<i % 3>`; the eleventh has neither. */
function trace(i: number): Trace {
  return Trace.parse({
    id: `t${String(i).padStart(2, "0")}`,
    startedAt: new Date(Date.UTC(2026, 2, 1, 10, i)).toISOString(),
    ...(i === 11 ? {} : { sessionId: `s${i % 4}`, userId: `u${i % 3}` }),
    input: `question ${i}`,
    steps: [],
  });
}

for (const target of databasesUnderTest()) {
  describe(`the sessions and users index (${target.name})`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "groups")).id;
      await insertTraces(
        db,
        tenant,
        Array.from({ length: 12 }, (_, i) => trace(i)),
      );
      // t00, t04 and t08 (session s0) failed, t01 passed, t02 stayed unknown
      await db.query(
        `insert into verdicts (tenant_id, trace_id, status, judgement)
         select $1, x.id, x.status, '{}'::jsonb
         from unnest(array['t00', 't04', 't08', 't01', 't02'], array['failed', 'failed', 'failed', 'passed', 'unknown'])
              as x(id, status)`,
        [tenant],
      );
    });
    after(() => db?.close());

    it("lists each session once, the latest seen first, with its traces, verdicts, first and last trace", async () => {
      const { data, nextCursor } = await listTraceGroups(db, tenant, "session");
      assert.equal(nextCursor, null);
      assert.deepEqual(
        data.map((g) => [g.id, g.traces, g.failed, g.passed, g.failureRate, g.others]),
        [
          ["s2", 3, 0, 0, null, 3],
          ["s1", 3, 0, 1, 0, 3],
          ["s0", 3, 3, 0, 1, 3],
          ["s3", 2, 0, 0, null, 2],
        ],
      );
      const s1 = data[1];
      assert.equal(s1.firstSeen, "2026-03-01T10:01:00.000Z");
      assert.equal(s1.lastSeen, "2026-03-01T10:09:00.000Z");
    });

    it("pages by cursor with no group twice and none left out, users as sessions", async () => {
      for (const kind of ["session", "user"] as const) {
        const whole = (await listTraceGroups(db, tenant, kind)).data.map((g) => g.id);
        const paged: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await listTraceGroups(db, tenant, kind, { limit: 1, cursor });
          paged.push(...page.data.map((g) => g.id));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        assert.deepEqual(paged, whole, kind);
      }
      assert.deepEqual(
        (await listTraceGroups(db, tenant, "user")).data.map((g) => [g.id, g.traces, g.failed]),
        [
          ["u1", 4, 1],
          ["u0", 4, 1],
          ["u2", 3, 1],
        ],
      );
    });

    it("refuses a cursor it did not make, or one whose time or id the database cannot take", async () => {
      const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
      for (const cursor of [
        "not-a-cursor",
        cursorOf(["+275760-09-13T00:00:00.000Z", "t01"]),
        cursorOf(["2026-03-01T10:05:00.000Z", "t\u0000"]),
        cursorOf(["2026-03-01T10:05:00.000Z"]),
      ])
        await assert.rejects(listTraceGroups(db, tenant, "user", { cursor }), /cursor: not a cursor/, cursor);
    });
  });
}
