import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { listAudit } from "./audit-log.ts";
import type { Database } from "./database.ts";
import {
  getModelVersion,
  listModelVersions,
  registerModelVersion,
  transitionModelVersion,
} from "./model-registry.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";

for (const target of databasesUnderTest()) {
  describe(`model registry on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    let other: string;
    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
      other = (await createTenant(db, "globex")).id;
    });
    after(() => db?.close());

    it("registers a checkpoint as a candidate with its lineage and audits it", async () => {
      const base = await registerModelVersion(db, tenant, {
        name: "base",
        status: "promoted",
        artifactDir: "/models/base",
        actor: "system:setup",
      });
      const candidate = await registerModelVersion(db, tenant, {
        name: "run_1/step-50",
        parentId: base.id,
        artifactDir: "/runs/run_1/step-50",
        lineage: {
          runId: "run_1",
          recipeHash: "abc",
          datasets: [{ id: "ds_1", version: "v1", kind: "prompts" }],
        },
        actor: "system:orchestrator",
      });
      assert.equal(candidate.status, "candidate");
      assert.equal((await getModelVersion(db, tenant, "run_1/step-50")).lineage.runId, "run_1");
      const audit = await listAudit(db, tenant, { kind: "model_version", id: candidate.id });
      assert.deepEqual(
        audit.map((a) => [a.action, a.toState, a.actor]),
        [["register", "candidate", "system:orchestrator"]],
      );
    });

    it("moves a version only from the states it names, and audits each move", async () => {
      const mv = await registerModelVersion(db, tenant, { name: "m2", artifactDir: "/x", actor: "test" });
      await transitionModelVersion(db, tenant, mv.id, {
        from: ["candidate"],
        to: "validated",
        actor: "system:validator",
        action: "validate",
        evidence: { ndr: 1 },
        metrics: { functional: 0.9 },
      });
      await assert.rejects(
        transitionModelVersion(db, tenant, mv.id, {
          from: ["candidate"],
          to: "rejected",
          actor: "x",
          action: "reject",
        }),
        { message: /m2 is validated; it can become rejected only from candidate/ },
      );
      const moved = await getModelVersion(db, tenant, mv.id);
      assert.equal(moved.status, "validated");
      assert.deepEqual(moved.metrics, { functional: 0.9 });
      assert.deepEqual(
        (await listAudit(db, tenant, { kind: "model_version", id: mv.id })).map((a) => a.fromState),
        [null, "candidate"],
      );
    });

    it("refuses to change or delete audit entries", async () => {
      await assert.rejects(db.query("update audit_log set actor = 'forged'"), /append-only/);
      await assert.rejects(db.query("delete from audit_log"), /append-only/);
    });

    it("keeps model versions per tenant", async () => {
      await assert.rejects(getModelVersion(db, other, "base"), { name: "NotFoundError" });
      assert.equal((await listModelVersions(db, other)).length, 0);
      assert.deepEqual(
        (await listModelVersions(db, tenant, ["promoted"])).map((m) => m.name),
        ["base"],
      );
    });

    it("rejects a model with neither a checkpoint nor an upstream, and a duplicate name", async () => {
      await assert.rejects(
        registerModelVersion(db, tenant, { name: "empty", actor: "t" }),
        /needs artifactDir/,
      );
      await assert.rejects(
        registerModelVersion(db, tenant, { name: "base", artifactDir: "/y", actor: "t" }),
        /already exists/,
      );
    });
  });
}
