import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Trace } from "@arc/core";
import type { Database } from "./database.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { insertTraces } from "./trace-store.ts";

function batch(first: number, count: number): Trace[] {
  return Array.from({ length: count }, (_, i) =>
    Trace.parse({
      id: `t${first + i}`,
      startedAt: "2026-01-01T00:00:00Z",
      steps: [{ id: "s1", kind: "tool", startedAt: "2026-01-01T00:00:00Z", input: { n: first + i } }],
    }),
  );
}

/** The plan every connection caches for the foreign-key check of a row pointing into `traces`. */
async function cachedForeignKeyPlan(db: Database): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.exec(
      "set local plan_cache_mode = force_generic_plan; " +
        "prepare fk_check_plan(text, text) as select 1 from only traces x where tenant_id = $1 and id = $2 for key share of x",
    );
    const plan = await tx.query("explain execute fk_check_plan('tenant', 'trace')");
    await tx.exec("deallocate fk_check_plan");
    return plan.map((row) => Object.values(row)[0]).join("\n");
  });
}

for (const target of databasesUnderTest()) {
  describe(`trace statistics as ingest grows traces (${target.name})`, { skip: target.skip }, () => {
    it("keeps them no older than half the table, so foreign-key checks use the primary key", async () => {
      const db = await target.open();
      try {
        const { id: tenantId } = await createTenant(db, "acme");
        for (let first = 0; first < 2000; first += 250) await insertTraces(db, tenantId, batch(first, 250));
        const [table] = await db.query<{ rows: number }>(
          "select reltuples::float8 as rows from pg_class where oid = 'traces'::regclass",
        );
        assert.ok(table.rows >= 1000, `statistics say ${table.rows} traces of 2000`);
        assert.match(await cachedForeignKeyPlan(db), /Index Scan using traces_pkey/);
      } finally {
        await db.close();
      }
    });
  });
}
