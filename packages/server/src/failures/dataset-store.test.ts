import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { buildPromptPool, taskToRow } from "@arc/core";
import { generateToolcallTasks } from "@arc/core/families";
import type { Database } from "../store/database.ts";
import { createTenant } from "../store/tenants.ts";
import { databasesUnderTest } from "../store/test-databases.ts";
import { getDataset, listDatasets, saveDataset } from "./dataset-store.ts";

for (const target of databasesUnderTest()) {
  describe(`dataset store on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    const pool = (tenantId: string, seed: number) =>
      buildPromptPool({
        tenantId,
        seed,
        failures: [],
        replay: generateToolcallTasks({ split: "train", seed: 1, count: 20 }).map(taskToRow),
        size: 10,
        evalSets: [],
      });

    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("stores a dataset once under an id derived from its content version", async () => {
      const first = await saveDataset(db, pool(tenant, 1), "api");
      assert.equal(first.created, true);
      assert.equal(
        first.dataset.id,
        `ds_${first.dataset.version.slice("sha256:".length, "sha256:".length + 16)}`,
      );
      const again = await saveDataset(db, pool(tenant, 1), "schedule:nightly");
      assert.equal(again.created, false);
      assert.equal(again.dataset.createdBy, "api");
      const other = await saveDataset(db, pool(tenant, 2), "api");
      assert.notEqual(other.dataset.id, first.dataset.id);
      assert.equal((await listDatasets(db, tenant, { kind: "prompts" })).length, 2);
      assert.deepEqual((await getDataset(db, tenant, first.dataset.id)).rows, pool(tenant, 1).rows);
    });

    it("refuses to change or delete a stored dataset", async () => {
      const [stored] = await listDatasets(db, tenant);
      await assert.rejects(
        db.query("update datasets set row_count = 0 where id = $1", [stored.id]),
        /datasets are immutable: UPDATE is not allowed/,
      );
      await assert.rejects(
        db.query("delete from datasets where id = $1", [stored.id]),
        /datasets are immutable: DELETE/,
      );
    });
  });
}
