import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Trace } from "@arc/core";
import { simulateProductionTraffic } from "@arc/core/testing";
import type { Database } from "./database.ts";
import { getModelVersion, listModelVersions, registerModelVersion } from "./model-registry.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";
import { getTraces, insertTraces } from "./trace-store.ts";

/** `{next: {next: ... "bottom"}}`, `depth` objects deep. */
function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = { next: value };
  return value;
}

/** How deep `nested` goes, counted without recursion. */
function depthOf(value: unknown): number {
  let depth = 0;
  for (let v = value; typeof v === "object" && v !== null; v = (v as { next: unknown }).next) depth++;
  return depth;
}

for (const target of databasesUnderTest()) {
  // A case that fails fails rather than hangs: reading these once wedged the embedded database for good.
  describe(`records nested deeply on ${target.name}`, { skip: target.skip, timeout: 120_000 }, () => {
    let db: Database;
    let tenant: string;
    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("lists and gets a model whose lineage is nested 2,500 levels deep, as it was stored", async () => {
      await registerModelVersion(db, tenant, { name: "plain", artifactDir: "/models/plain", actor: "test" });
      const deep = await registerModelVersion(db, tenant, {
        name: "deep",
        artifactDir: "/models/deep",
        lineage: { runId: "run_1", extra: nested(2_500) },
        actor: "test",
      });
      assert.equal(depthOf(deep.lineage.extra), 2_500);
      const listed = await listModelVersions(db, tenant);
      assert.deepEqual(listed.map((m) => m.name).sort(), ["deep", "plain"]);
      assert.equal(depthOf(listed.find((m) => m.name === "deep")?.lineage.extra), 2_500);
      assert.equal(depthOf((await getModelVersion(db, tenant, "deep")).lineage.extra), 2_500);
      assert.ok(JSON.stringify({ data: listed }).length > 2_500 * 8, "the list can be answered as JSON");
    });

    it("reads back a trace whose step is nested 2,000 levels deep", async () => {
      const [trace] = simulateProductionTraffic({ seed: 3, count: 1 }).map((s) => Trace.parse(s.trace));
      await insertTraces(db, tenant, [
        { ...trace, steps: [{ ...trace.steps[0], metadata: { deep: nested(2_000) } }] },
      ]);
      const stored = (await getTraces(db, tenant, [trace.id])).get(trace.id);
      assert.equal(depthOf(stored?.steps[0].metadata?.deep), 2_000);
    });
  });
}
