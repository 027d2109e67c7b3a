import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ConflictError } from "@arc/core";
import { startCanary } from "../deploy/deployment-store.ts";
import type { Database } from "./database.ts";
import { registerModelVersion, transitionModelVersion } from "./model-registry.ts";
import { createTenant } from "./tenants.ts";
import { databasesUnderTest } from "./test-databases.ts";

/** Runs the writes at once and returns what each did: "ok", "conflict" (a ConflictError, 409) or the other error. */
async function race(writes: (() => Promise<unknown>)[]): Promise<string[]> {
  const settled = await Promise.allSettled(writes.map((w) => w()));
  return settled
    .map((s) =>
      s.status === "fulfilled"
        ? "ok"
        : s.reason instanceof ConflictError && s.reason.statusCode === 409
          ? "conflict"
          : String(s.reason),
    )
    .sort();
}

for (const target of databasesUnderTest()) {
  describe(`writers racing for a unique thing on ${target.name}`, { skip: target.skip }, () => {
    let db: Database;
    let tenant: string;
    before(async () => {
      db = await target.open();
      tenant = (await createTenant(db, "acme")).id;
    });
    after(() => db?.close());

    it("gives the loser of two concurrent tenant creations with one name a ConflictError", async () => {
      assert.deepEqual(await race([() => createTenant(db, "twin"), () => createTenant(db, "twin")]), [
        "conflict",
        "ok",
      ]);
    });

    it("gives the loser of two concurrent registrations with one model name a ConflictError", async () => {
      const register = () =>
        registerModelVersion(db, tenant, { name: "same", artifactDir: "/m", actor: "t" });
      assert.deepEqual(await race([register, register, register]), ["conflict", "conflict", "ok"]);
    });

    it("gives the loser of two concurrent canary starts a ConflictError, and leaves one canary", async () => {
      await registerModelVersion(db, tenant, {
        name: "prod",
        status: "promoted",
        artifactDir: "/p",
        actor: "t",
      });
      const ids: string[] = [];
      for (const name of ["c1", "c2"]) {
        const m = await registerModelVersion(db, tenant, { name, artifactDir: `/${name}`, actor: "t" });
        await transitionModelVersion(db, tenant, m.id, {
          from: ["candidate"],
          to: "validated",
          actor: "t",
          action: "validate",
        });
        ids.push(m.id);
      }
      const start = (candidate: string) => () => startCanary(db, tenant, { candidate, actor: "t" });
      assert.deepEqual(await race([start(ids[0]), start(ids[1])]), ["conflict", "ok"]);
      const rows = await db.query("select 1 from deployments where tenant_id = $1 and status = 'canary'", [
        tenant,
      ]);
      assert.equal(rows.length, 1);
    });
  });
}
