import { createHash } from "node:crypto";
import type { Database } from "./database.ts";
import { migrations as allMigrations, type Migration } from "./migrations/index.ts";

/** Arbitrary constant key for the advisory lock that keeps concurrent `arc serve` processes from migrating twice. */
const migrationLockKey = 7_342_001;

/** Brings the schema up to date; safe to call from several processes at once. Returns the versions it applied. */
export async function migrate(db: Database, migrations: Migration[] = allMigrations): Promise<number[]> {
  await db.query(
    "create table if not exists schema_migrations (version integer primary key, name text not null, applied_at timestamptz not null default now())",
  );
  const applied: number[] = [];
  for (const migration of migrations) {
    const didApply = await db.transaction(async (tx) => {
      await tx.query("select pg_advisory_xact_lock($1)", [migrationLockKey]);
      const done = await tx.query("select 1 from schema_migrations where version = $1", [migration.version]);
      if (done.length > 0) return false;
      await tx.exec(migration.sql);
      await tx.query("insert into schema_migrations (version, name) values ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (didApply) applied.push(migration.version);
  }
  return applied;
}

/** Names a list of migrations by what they hold (versions, names, SQL): equal keys mean the same schema. */
export function migrationsKey(migrations: Migration[] = allMigrations): string {
  const hash = createHash("sha256");
  for (const m of migrations) hash.update(JSON.stringify([m.version, m.name, m.sql]));
  return hash.digest("hex").slice(0, 16);
}
