import { join } from "node:path";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { openPgliteDatabase } from "./pglite-database.ts";
import { openPostgresDatabase } from "./postgres-database.ts";

/** Opens the database a config names (a server when `databaseUrl` is set, else PGlite under `home`/data) and migrates it. */
export async function openDatabase(options: { databaseUrl?: string; home: string }): Promise<Database> {
  const db = options.databaseUrl
    ? await openPostgresDatabase(options.databaseUrl)
    : await openPgliteDatabase(join(options.home, "data"));
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
