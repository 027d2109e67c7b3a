import { randomBytes } from "node:crypto";
import { skipWithout } from "../../../../scripts/required-parts.mjs";
import type { Database } from "./database.ts";
import { migrate } from "./migrate.ts";
import { openMigratedPglite } from "./open-database.ts";
import { openPostgresDatabase } from "./postgres-database.ts";

/** A database engine the store's tests run on; `skip` says why it cannot run here. */
export interface DatabaseUnderTest {
  /** Which engine; test names carry it. */
  name: "pglite" | "postgres";
  /** A fresh, migrated, isolated database; closing it removes what the test wrote. */
  open(): Promise<Database>;
  /** Why the engine cannot run here (for `describe`'s `skip`), or false. */
  skip: string | false;
}

/**
 * Embedded PGlite always; the PostgreSQL server named by ARC_TEST_DATABASE_URL when set (each open in its own
 * schema). Without it the server's tests skip, or, where ARC_REQUIRE names postgres, this throws.
 */
export function databasesUnderTest(): DatabaseUnderTest[] {
  const url = process.env.ARC_TEST_DATABASE_URL;
  return [
    {
      name: "pglite",
      skip: false,
      async open() {
        return openMigratedPglite("memory://");
      },
    },
    {
      name: "postgres",
      skip: noPostgresServer(),
      async open() {
        const schema = `arc_test_${randomBytes(6).toString("hex")}`;
        const admin = await openPostgresDatabase(url as string, { maxConnections: 1 });
        await admin.query(`create schema ${schema}`);
        const db = await openPostgresDatabase(url as string, { schema });
        await migrate(db);
        return {
          ...db,
          async close() {
            await db.close();
            await admin.query(`drop schema ${schema} cascade`);
            await admin.close();
          },
        };
      },
    },
  ];
}

/** Why the PostgreSQL server's tests cannot run here (ARC_TEST_DATABASE_URL unset), for `describe`'s `skip`, or false. */
export function noPostgresServer(): string | false {
  return skipWithout(
    "postgres",
    !process.env.ARC_TEST_DATABASE_URL &&
      "ARC_TEST_DATABASE_URL is not set: no PostgreSQL server to test against",
  );
}
