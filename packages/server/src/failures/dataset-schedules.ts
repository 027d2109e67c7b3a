import { NotFoundError } from "@arc/core";
import type { Database, Queryable, Row } from "../store/database.ts";
import type { RegistrySetup } from "./failure-pipeline-config.ts";
import { type DatasetRequest, parseDatasetRequest, synthesizeDataset } from "./synthesize-dataset.ts";

/** A standing order to synthesize a dataset every `everyMs` (a new version appears only when the data changed). */
export interface DatasetSchedule {
  name: string;
  everyMs: number;
  request: DatasetRequest;
  nextRunAt: string;
  lastRunAt: string | null;
  /** The dataset the last run made or found (same content, same dataset). */
  lastDatasetId: string | null;
  lastError: string | null;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function toSchedule(r: Row): DatasetSchedule {
  return {
    name: r.name as string,
    everyMs: Number(r.every_ms),
    request: r.request as DatasetRequest,
    nextRunAt: iso(r.next_run_at) as string,
    lastRunAt: iso(r.last_run_at),
    lastDatasetId: (r.last_dataset_id as string | null) ?? null,
    lastError: (r.last_error as string | null) ?? null,
  };
}

/** Creates or replaces a tenant's schedule; its first run is due `everyMs` from now. */
export async function putDatasetSchedule(
  db: Queryable,
  tenantId: string,
  name: string,
  everyMs: number,
  request: DatasetRequest,
): Promise<DatasetSchedule> {
  const [row] = await db.query(
    `insert into dataset_schedules (tenant_id, name, every_ms, request, next_run_at)
     values ($1, $2, $3::bigint, $4::jsonb, now() + $5::float8 * interval '1 millisecond')
     on conflict (tenant_id, name) do update set every_ms = excluded.every_ms, request = excluded.request,
       next_run_at = excluded.next_run_at, last_error = null
     returning *`,
    [tenantId, name, everyMs, JSON.stringify(request), everyMs],
  );
  return toSchedule(row);
}

/** A tenant's schedules by name. */
export async function listDatasetSchedules(db: Queryable, tenantId: string): Promise<DatasetSchedule[]> {
  const rows = await db.query("select * from dataset_schedules where tenant_id = $1 order by name", [
    tenantId,
  ]);
  return rows.map(toSchedule);
}

/** Removes a tenant's schedule; NotFoundError (404) when it has none by that name. */
export async function deleteDatasetSchedule(db: Queryable, tenantId: string, name: string): Promise<void> {
  const rows = await db.query(
    "delete from dataset_schedules where tenant_id = $1 and name = $2 returning 1",
    [tenantId, name],
  );
  if (rows.length === 0) throw new NotFoundError(`no dataset schedule named "${name}"`);
}

/**
 * Runs every schedule that is due, across tenants. Each is claimed by moving its next run on in one statement
 * (`FOR UPDATE SKIP LOCKED`), so of several servers sharing a database exactly one runs it; the synthesis itself runs
 * in its own transaction under the tenant's dataset-build lock, with each tenant's registry (`setupRegistry`).
 * Returns the schedules run, with what each made.
 */
export async function runDueSchedules(
  db: Database,
  setupRegistry?: RegistrySetup,
): Promise<{ tenantId: string; schedule: DatasetSchedule }[]> {
  const due = await db.query(
    `update dataset_schedules s set next_run_at = now() + s.every_ms * interval '1 millisecond', last_run_at = now()
       from (select tenant_id, name from dataset_schedules where next_run_at <= now()
              order by next_run_at limit 10 for update skip locked) d
      where s.tenant_id = d.tenant_id and s.name = d.name
      returning s.*`,
  );
  const ran: { tenantId: string; schedule: DatasetSchedule }[] = [];
  for (const row of due) {
    const tenantId = row.tenant_id as string;
    const schedule = toSchedule(row);
    let datasetId: string | null = null;
    let error: string | null = null;
    try {
      const request = parseDatasetRequest(schedule.request);
      datasetId = (
        await synthesizeDataset(db, tenantId, request, {
          createdBy: `schedule:${schedule.name}`,
          setupRegistry,
        })
      ).dataset.id;
    } catch (e) {
      error = (e as Error).message;
    }
    const [updated] = await db.query(
      `update dataset_schedules set last_dataset_id = coalesce($3, last_dataset_id), last_error = $4
        where tenant_id = $1 and name = $2 returning *`,
      [tenantId, schedule.name, datasetId, error],
    );
    if (updated) ran.push({ tenantId, schedule: toSchedule(updated) });
  }
  return ran;
}
