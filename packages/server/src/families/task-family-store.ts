import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  ConflictError,
  InvalidInputError,
  jsonTaskFamily,
  patternsProblem,
  type TaskFamily,
  TaskFamilyRegistry,
  taskFamilies,
} from "@arc/core";
import type { Queryable } from "../store/database.ts";

/** A family a tenant registered as data, as stored. */
export interface StoredTaskFamily {
  env: string;
  /** The JsonFamilySpec as the tenant sent it, defaults filled in. */
  spec: Record<string, unknown>;
  updatedAt: string;
}

/**
 * Stores a tenant's family given as data (a JsonFamilySpec), creating or replacing it by env id. Throws an
 * InvalidInputError naming the field for a bad spec (its tools' schemas out of SCHEMA_BOUNDS, or a pattern RE2 cannot
 * run), and a ConflictError for an env id the process's own families (built-in or registered by module path) already
 * use.
 */
export async function putTaskFamily(
  db: Queryable,
  tenantId: string,
  spec: unknown,
): Promise<{ family: TaskFamily; created: boolean }> {
  const family = jsonTaskFamily(spec, "family");
  const tools = family.tools ?? [];
  const problem = patternsProblem(tools.map((t) => t.parameters));
  if (problem) {
    const field =
      problem.schema === undefined
        ? "tools"
        : ["tools", problem.schema, "parameters", ...problem.path].join(".");
    throw new InvalidInputError(`family: ${field}: ${problem.message}`, { field });
  }
  if (taskFamilies.find(family.env)) {
    throw new ConflictError(
      `env: ${JSON.stringify(family.env)} is a family of this server; pick another env id`,
    );
  }
  const [row] = await db.query<{ created: boolean }>(
    `insert into task_families (tenant_id, env, spec) values ($1, $2, $3::json)
     on conflict (tenant_id, env) do update set spec = excluded.spec, updated_at = now()
     returning (xmax = 0) as created`,
    [tenantId, family.env, JSON.stringify(spec)],
  );
  return { family, created: row?.created ?? true };
}

/** The families a tenant registered as data, by env id. */
export async function listTaskFamilySpecs(db: Queryable, tenantId: string): Promise<StoredTaskFamily[]> {
  const rows = await db.query<{ env: string; spec: Record<string, unknown>; updated_at: Date | string }>(
    "select env, spec, updated_at from task_families where tenant_id = $1 order by env",
    [tenantId],
  );
  return rows.map((r) => ({ env: r.env, spec: r.spec, updatedAt: new Date(r.updated_at).toISOString() }));
}

/** Removes a tenant's family; returns whether it was there. */
export async function deleteTaskFamily(db: Queryable, tenantId: string, env: string): Promise<boolean> {
  const rows = await db.query("delete from task_families where tenant_id = $1 and env = $2 returning env", [
    tenantId,
    env,
  ]);
  return rows.length > 0;
}

/**
 * The families a tenant's data is judged with: the server process's (built-in and registered by module path), then
 * the tenant's own, given as data. Another tenant's families are never in it.
 */
export async function tenantTaskFamilies(db: Queryable, tenantId: string): Promise<TaskFamilyRegistry> {
  const registry = new TaskFamilyRegistry();
  for (const family of taskFamilies.list()) registry.register(family);
  for (const stored of await listTaskFamilySpecs(db, tenantId)) {
    if (registry.find(stored.env)) continue;
    registry.register(jsonTaskFamily(stored.spec, `family ${stored.env}`));
  }
  return registry;
}

/** Writes each family the tenant registered as data to `<dir>/<env>.json`, for a run to load; returns the files. */
export async function writeTenantFamilies(db: Queryable, tenantId: string, dir: string): Promise<string[]> {
  const stored = await listTaskFamilySpecs(db, tenantId);
  if (stored.length === 0) return [];
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (const family of stored) {
    const file = join(dir, `${family.env}.json`);
    await writeFile(file, `${JSON.stringify(family.spec, null, 2)}\n`);
    files.push(file);
  }
  return files;
}
