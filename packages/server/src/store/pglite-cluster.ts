import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  openAsBlob,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import type { PgliteWasmModules } from "./pglite-wasm-modules.ts";

/** PGlite's version (a cluster saved by one version is never loaded by another); null where it cannot be read. */
function pgliteVersion(): string | null {
  try {
    const packageJson = fileURLToPath(
      new URL("../package.json", import.meta.resolve("@electric-sql/pglite")),
    );
    return JSON.parse(readFileSync(packageJson, "utf8")).version;
  } catch {
    return null;
  }
}

/**
 * Where a fresh cluster (PGlite's initdb output, before any statement of Arc's) is kept, one file per version: the
 * user's cache folder (`$XDG_CACHE_HOME/arc`, else `~/.cache/arc`); null when PGlite's version cannot be read.
 */
export function clusterTemplatePath(): string | null {
  const version = pgliteVersion();
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return version ? join(cache, "arc", `pglite-fresh-cluster-${version}.tar`) : null;
}

/** Whether `path` belongs to this user and no one else can write it. */
function ownedAlone(path: string): boolean {
  if (typeof process.getuid !== "function") return true;
  const { uid, mode } = statSync(path);
  return uid === process.getuid() && (mode & 0o022) === 0;
}

/** The saved cluster, or null when none is saved, or its file or folder is not this user's alone (it could be planted). */
async function readTemplate(path: string): Promise<Blob | null> {
  try {
    return existsSync(path) && ownedAlone(path) && ownedAlone(dirname(path)) ? await openAsBlob(path) : null;
  } catch {
    return null;
  }
}

/**
 * Where a migrated cluster (a fresh one with every migration applied) is kept, beside the fresh one: one file per
 * PGlite version and `migrationsKey` (which names the migrations it holds); null when PGlite's version cannot be read.
 */
export function migratedCopyPath(migrationsKey: string): string | null {
  const fresh = clusterTemplatePath();
  return (
    fresh?.replace(/pglite-fresh-cluster-(.*)\.tar$/, `pglite-migrated-cluster-$1-${migrationsKey}.tar`) ??
    null
  );
}

/**
 * Keeps a cluster for later databases, in a folder only this user can write. Written to a file of its own and
 * renamed, so a reader sees the whole file or none. One that cannot be written only means later opens do the work
 * it would have saved.
 */
export async function saveClusterCopy(pglite: PGlite, path: string): Promise<void> {
  const partial = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  try {
    // the folder first: where no copy can be kept, the dump's cost is not paid for nothing
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (!ownedAlone(dirname(path))) return;
    accessSync(dirname(path), constants.W_OK);
    const tar = Buffer.from(await (await pglite.dumpDataDir("none")).arrayBuffer());
    writeFileSync(partial, tar, { mode: 0o600 });
    renameSync(partial, path);
  } catch {
    // a cache: the database itself is open and whole
    rmSync(partial, { force: true });
  }
}

/** How many migrated copies (of different migrations: checkouts or versions side by side) the cache keeps. */
export const MIGRATED_COPIES_KEPT = 3;

/**
 * Keeps a migrated cluster at `path` (see `migratedCopyPath`), and of the copies of other migrations beside it only
 * the most recently written, `MIGRATED_COPIES_KEPT` in all.
 */
export async function saveMigratedCopy(pglite: PGlite, path: string): Promise<void> {
  await saveClusterCopy(pglite, path);
  const folder = dirname(path);
  const prefix = basename(path).replace(/-[^-]+\.tar$/, "-");
  try {
    const copies = readdirSync(folder)
      .filter((name) => name.startsWith(prefix) && name.endsWith(".tar"))
      .map((name) => ({ name, written: statSync(join(folder, name)).mtimeMs }))
      .sort((a, b) => b.written - a.written);
    for (const { name } of copies.slice(MIGRATED_COPIES_KEPT)) rmSync(join(folder, name), { force: true });
  } catch {
    // a cache: an old copy left behind costs disk, not correctness
  }
}

/** Where a cluster came from: a folder already in use, a saved migrated or fresh copy, or initdb. */
export type ClusterOrigin = "used folder" | "migrated copy" | "fresh copy" | "initdb";

/**
 * Opens PGlite on `dataDir` (`memory://`, or a folder). A new cluster (in memory, or in an empty folder) starts from
 * a copy saved in the user's cache folder: the migrated one at `migratedCopy` when given and saved, else a fresh one,
 * so initdb runs once per PGlite version rather than once per database: a new database, its thread's start included,
 * opens in about 0.9 s instead of 2.5 s (2 cores, idle), and in about 0.6 s once the process has compiled PGlite's
 * programs (`wasmModules`, see `pgliteWasmModules`). A copy that does not load is dropped, and the next kind is
 * tried. The fresh copy is saved by the first cluster made by initdb; the migrated one by `saveMigratedCopy`.
 */
export async function openPgliteCluster(
  dataDir: string,
  migratedCopy?: string | null,
  wasmModules?: PgliteWasmModules,
): Promise<{ pglite: PGlite; origin: ClusterOrigin }> {
  const inMemory = dataDir.startsWith("memory://");
  const fresh = clusterTemplatePath();
  const compiled = wasmModules && {
    pgliteWasmModule: wasmModules.pglite,
    initdbWasmModule: wasmModules.initdb,
  };
  if (!inMemory && readdirSync(dataDir).length > 0)
    return { pglite: await PGlite.create({ dataDir, ...compiled }), origin: "used folder" };
  const copies: [string | null | undefined, ClusterOrigin][] = [
    [migratedCopy, "migrated copy"],
    [fresh, "fresh copy"],
  ];
  for (const [path, origin] of copies) {
    const template = path ? await readTemplate(path) : null;
    if (!path || !template) continue;
    try {
      return { pglite: await PGlite.create({ dataDir, loadDataDir: template, ...compiled }), origin };
    } catch {
      rmSync(path, { force: true });
      if (!inMemory) {
        for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true });
      }
    }
  }
  const pglite = await PGlite.create({ dataDir, ...compiled });
  if (fresh) await saveClusterCopy(pglite, fresh);
  return { pglite, origin: "initdb" };
}
