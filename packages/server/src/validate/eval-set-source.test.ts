import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { toolcallEvalFixture } from "../deploy/__fixtures__/toolcall-eval-fixture.ts";
import { saveDataset } from "../failures/dataset-store.ts";
import type { Database } from "../store/database.ts";
import { migrate } from "../store/migrate.ts";
import { openPgliteDatabase } from "../store/pglite-database.ts";
import { createTenant } from "../store/tenants.ts";
import { PipelineEvalSets, StoredEvalSets } from "./eval-set-source.ts";

describe("EvalSet sources", () => {
  let db: Database;
  before(async () => {
    db = await openPgliteDatabase("memory://");
    await migrate(db);
  });
  after(async () => {
    await db.close();
  });

  it("judges on the failure pipeline's newest EvalSet, or on one handed over later", async () => {
    const tenant = await createTenant(db, "evalsets");
    const handed = new StoredEvalSets(db);
    const source = new PipelineEvalSets(db, handed);
    assert.deepEqual(await source.evalSetsFor(tenant.id), []);
    const synthesized = toolcallEvalFixture(tenant.id).evalSet;
    await saveDataset(db, synthesized, "test");
    const [first] = await source.evalSetsFor(tenant.id);
    assert.equal(first.version, synthesized.version);
    assert.equal(first.rows.length, synthesized.rows.length);
    await new Promise((r) => setTimeout(r, 5));
    await handed.put(tenant.id, {
      ...synthesized,
      rows: synthesized.rows.slice(0, 3),
      version: "sha256:handed",
    });
    const [second] = await source.evalSetsFor(tenant.id);
    assert.equal(second.version, "sha256:handed");
    assert.equal(second.rows.length, 3);
  });

  it("refuses an EvalSet row without a slice, naming the row", async () => {
    const tenant = await createTenant(db, "bad-evalset");
    const rows = [{ id: "a", question: "q", env: "toolcall", solution: {}, meta: {} }];
    await assert.rejects(
      new StoredEvalSets(db).put(tenant.id, {
        kind: "eval",
        version: "v",
        rows: rows as never,
        createdFrom: { seed: 0, patternIds: [], params: {} },
      }),
      /rows\.0\.meta\.slice: expected a pattern id or "general"/,
    );
  });
});
