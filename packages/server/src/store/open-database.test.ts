import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { migrate, migrationsKey } from "./migrate.ts";
import { migrations } from "./migrations/index.ts";
import { openMigratedPglite } from "./open-database.ts";
import { migratedCopyPath } from "./pglite-cluster.ts";
import type { PgliteDatabase } from "./pglite-database.ts";

/** The versions a database has applied. */
async function applied(db: PgliteDatabase): Promise<number[]> {
  const rows = await db.query<{ version: number }>("select version from schema_migrations order by version");
  return rows.map((r) => r.version);
}

describe("a new embedded database starts from a migrated copy", () => {
  const outerCache = process.env.XDG_CACHE_HOME;
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "arc-open-database-"));
    // the copies live in the user's cache folder: this test's own, so it starts with none
    process.env.XDG_CACHE_HOME = join(dir, "cache");
  });
  after(() => {
    if (outerCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = outerCache;
    rmSync(dir, { recursive: true, force: true });
  });

  it("migrates the first one and keeps it; the next is a copy that migrating leaves as it is, without the first's rows", async () => {
    const copy = migratedCopyPath(migrationsKey()) as string;
    const first = await openMigratedPglite("memory://");
    assert.equal(first.origin, "initdb");
    assert.deepEqual(
      await applied(first),
      migrations.map((m) => m.version),
    );
    assert.ok(existsSync(copy), "the migrated cluster is kept");
    await first.query("insert into tenants (id, name) values ('t1', 'first')");
    await first.close();

    const folder = join(dir, "data");
    const second = await openMigratedPglite(folder);
    assert.equal(second.origin, "migrated copy");
    assert.deepEqual(
      await applied(second),
      migrations.map((m) => m.version),
    );
    assert.deepEqual(await migrate(second), [], "nothing left to apply");
    assert.deepEqual(
      await second.query("select id from tenants"),
      [],
      "a copy of the migrated cluster, not of the first database",
    );
    await second.query("insert into tenants (id, name) values ('t2', 'second')");
    await second.close();

    const reopened = await openMigratedPglite(folder);
    assert.equal(reopened.origin, "used folder");
    assert.deepEqual(await reopened.query("select id from tenants"), [{ id: "t2" }]);
    await reopened.close();
  });

  it("names its copy by the migrations it holds", () => {
    assert.notEqual(migrationsKey(), migrationsKey(migrations.slice(0, -1)));
    assert.equal(migrationsKey(), migrationsKey([...migrations]));
  });
});
