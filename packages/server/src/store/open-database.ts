import { join } from "node:path";
import type { Database } from "./database.ts";
import { migrate, migrationsKey } from "./migrate.ts";
import { migratedCopyPath } from "./pglite-cluster.ts";
import { openPgliteDatabase, type PgliteDatabase, type PgliteOptions } from "./pglite-database.ts";
import { openPostgresDatabase } from "./postgres-database.ts";

/** Opens the database a config names (a server when `databaseUrl` is set, else PGlite under `home`/data) and migrates it. */
export async function openDatabase(options: {
  databaseUrl?: string;
  home: string;
  /** The embedded database's statement deadline (default DEFAULT_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}): Promise<Database> {
  if (!options.databaseUrl)
    return openMigratedPglite(join(options.home, "data"), { queryTimeoutMs: options.queryTimeoutMs });
  const db = await openPostgresDatabase(options.databaseUrl);
  await migrateOrClose(db);
  return db;
}

/**
 * Opens PGlite on `dataDir` (a folder, or `memory://`) and migrates it. A new cluster starts from a migrated copy in
 * the user's cache folder, kept by the first new cluster of this PGlite version and these migrations, so that only
 * the first one runs them (about 0.5 s of both cores' time each, on 2 cores).
 */
export async function openMigratedPglite(
  dataDir: string,
  options: PgliteOptions = {},
): Promise<PgliteDatabase> {
  const copy = migratedCopyPath(migrationsKey()) ?? undefined;
  const db = await openPgliteDatabase(dataDir, { ...options, migratedCopy: copy });
  await migrateOrClose(db);
  if (copy && (db.origin === "fresh copy" || db.origin === "initdb")) await db.saveMigratedCopy(copy);
  return db;
}

async function migrateOrClose(db: Database): Promise<void> {
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
}
