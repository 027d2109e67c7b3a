import { join } from "node:path";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { openPgliteDatabase } from "./pglite-database.ts";
import { openPostgresDatabase } from "./postgres-database.ts";

/** Opens the database a config names (a server when `databaseUrl` is set, else PGlite under `home`/data) and migrates it. */
export async function openDatabase(options: {
  databaseUrl?: string;
  home: string;
  /** The embedded database's statement deadline (default DEFAULT_QUERY_TIMEOUT_MS). */
  queryTimeoutMs?: number;
}): Promise<Database> {
  const db = options.databaseUrl
    ? await openPostgresDatabase(options.databaseUrl)
    : await openPgliteDatabase(join(options.home, "data"), { queryTimeoutMs: options.queryTimeoutMs });
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
