import assert from "node:assert/strict";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { PGlite } from "@electric-sql/pglite";
import {
  clusterTemplatePath,
  MIGRATED_COPIES_KEPT,
  migratedCopyPath,
  openPgliteCluster,
  saveMigratedCopy,
} from "./pglite-cluster.ts";

/** Whether `pglite` has the table a marked template carries. */
async function hasMarker(pglite: PGlite): Promise<boolean> {
  const { rows } = await pglite.query<{ n: number }>(
    "select count(*)::int as n from pg_tables where tablename = 'template_marker'",
  );
  return rows[0].n === 1;
}

describe("new PGlite clusters start from a saved fresh cluster", () => {
  const outerCache = process.env.XDG_CACHE_HOME;
  let dir: string;
  let template: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "arc-pglite-cluster-"));
    // the template lives in the user's cache folder: this test's own, so no other test sees its marked copies
    process.env.XDG_CACHE_HOME = join(dir, "cache");
    template = clusterTemplatePath() as string;
  });
  after(() => {
    if (outerCache === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = outerCache;
    rmSync(dir, { recursive: true, force: true });
  });

  let markedCluster: Promise<Buffer> | undefined;
  /** A cluster holding a table no initdb makes, as a tar (made once for the file). */
  function markedClusterTar(): Promise<Buffer> {
    markedCluster ??= (async () => {
      const marked = await PGlite.create("memory://");
      await marked.exec("create table template_marker (x int)");
      const tar = Buffer.from(await (await marked.dumpDataDir("none")).arrayBuffer());
      await marked.close();
      return tar;
    })();
    return markedCluster;
  }

  /** Saves, as the template, a cluster holding a table no initdb makes. */
  async function saveMarkedTemplate(): Promise<void> {
    const tar = await markedClusterTar();
    mkdirSync(dirname(template), { recursive: true, mode: 0o700 });
    writeFileSync(template, tar, { mode: 0o600 });
  }

  it("saves the first fresh cluster, and a new database in memory is a copy of the saved one", async () => {
    assert.equal(existsSync(template), false);
    const first = (await openPgliteCluster("memory://")).pglite;
    assert.equal(await hasMarker(first), false);
    await first.close();
    assert.ok(readFileSync(template).length > 1_000_000, "the fresh cluster is saved");

    await saveMarkedTemplate();
    const copy = (await openPgliteCluster("memory://")).pglite;
    assert.equal(await hasMarker(copy), true, "the database was loaded from the saved cluster");
    await copy.close();
  });

  it("fills an empty folder from the saved cluster, keeps what is written there, and opens a used folder as it is", async () => {
    await saveMarkedTemplate();
    const folder = join(dir, "data");
    mkdirSync(folder);
    const created = (await openPgliteCluster(folder)).pglite;
    assert.equal(await hasMarker(created), true);
    await created.exec("create table kept (x int); insert into kept values (7)");
    await created.close();

    rmSync(template);
    const reopened = (await openPgliteCluster(folder)).pglite;
    assert.deepEqual((await reopened.query("select x from kept")).rows, [{ x: 7 }]);
    await reopened.close();
    assert.equal(existsSync(template), false, "opening a used folder saves nothing");
  });

  it("drops a saved cluster that does not load, runs initdb, and saves a good one in its place", async () => {
    writeFileSync(template, "not a tar file");
    const folder = join(dir, "after-a-bad-template");
    mkdirSync(folder);
    const pglite = (await openPgliteCluster(folder)).pglite;
    assert.deepEqual((await pglite.query("select 1 as one")).rows, [{ one: 1 }]);
    assert.equal(await hasMarker(pglite), false);
    await pglite.close();
    assert.ok(readFileSync(template).length > 1_000_000, "a good copy replaced the bad one");
  });

  it("starts a new cluster from the migrated copy it is given, else from the fresh one, and drops one that does not load", async () => {
    await saveMarkedTemplate();
    const migrated = migratedCopyPath("k1") as string;
    assert.equal(dirname(migrated), dirname(template), "both copies live in the user's cache folder");
    const fallback = await openPgliteCluster("memory://", migrated);
    assert.equal(fallback.origin, "fresh copy", "no migrated copy is saved yet");
    await saveMigratedCopy(fallback.pglite, migrated);
    await fallback.pglite.close();

    const copy = await openPgliteCluster("memory://", migrated);
    assert.equal(copy.origin, "migrated copy");
    assert.equal(await hasMarker(copy.pglite), true);
    await copy.pglite.close();

    writeFileSync(migrated, "not a tar file");
    const afterBad = await openPgliteCluster("memory://", migrated);
    assert.equal(afterBad.origin, "fresh copy");
    await afterBad.pglite.close();
    assert.equal(existsSync(migrated), false, "the copy that did not load is gone");
  });

  it("keeps the most recent migrated copies: saving one removes the oldest past MIGRATED_COPIES_KEPT", async () => {
    const pglite = (await openPgliteCluster("memory://")).pglite;
    const keys = Array.from({ length: MIGRATED_COPIES_KEPT + 1 }, (_, i) => `key${i}`);
    for (const [i, key] of keys.entries()) {
      await saveMigratedCopy(pglite, migratedCopyPath(key) as string);
      // written a second apart, so their order by time is certain
      utimesSync(migratedCopyPath(key) as string, 1_000 + i, 1_000 + i);
    }
    await saveMigratedCopy(pglite, migratedCopyPath("newest") as string);
    await pglite.close();
    const kept = keys.filter((key) => existsSync(migratedCopyPath(key) as string));
    assert.deepEqual(
      kept,
      keys.slice(-(MIGRATED_COPIES_KEPT - 1)),
      "the newest copies of other migrations stay",
    );
    assert.ok(existsSync(migratedCopyPath("newest") as string));
    assert.ok(existsSync(template), "the fresh copy stays");
  });

  it("never loads a saved cluster that another user could have written, and leaves it in place", async () => {
    await saveMarkedTemplate();
    const planted = readFileSync(template);
    chmodSync(dirname(template), 0o777);
    try {
      const pglite = (await openPgliteCluster("memory://")).pglite;
      assert.equal(await hasMarker(pglite), false, "initdb made this one");
      await pglite.close();
      assert.ok(readFileSync(template).equals(planted), "nothing is saved into a folder others can write");
    } finally {
      chmodSync(dirname(template), 0o700);
    }
  });
});
