import { mkdirSync } from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { lockDataDir } from "./data-dir-lock.ts";
import type { Database, Queryable, Row } from "./database.ts";

/** Opens (creating on first use) the embedded PostgreSQL in `dataDir`, or in memory for `memory://`. */
export async function openPgliteDatabase(dataDir: string): Promise<Database> {
  const inMemory = dataDir.startsWith("memory://");
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const unlock = inMemory ? () => {} : lockDataDir(dataDir);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir);
  } catch (error) {
    unlock();
    throw error;
  }
  const wrap = (target: Pick<PGlite, "query" | "exec">): Queryable => ({
    async query<T extends Row = Row>(sql: string, params?: unknown[]) {
      return (await target.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await target.exec(sql);
    },
  });
  return {
    kind: "pglite",
    ...wrap(pglite),
    transaction: (fn) => pglite.transaction((tx) => fn(wrap(tx))),
    async close() {
      await pglite.close();
      unlock();
    },
  };
}
