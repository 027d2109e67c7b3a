import { type Dataset, type DatasetKind, NotFoundError } from "@arc/core";
import type { Queryable, Row } from "../store/database.ts";

/** A stored dataset without its rows: what listings show. */
export interface DatasetInfo {
  /** `ds_` + the first 16 hex digits of the content hash. */
  id: string;
  kind: DatasetKind;
  /** `sha256:<hex>` of kind, tenant and rows: equal content, equal version. */
  version: string;
  seed: number;
  /** Lineage: the patterns the dataset draws on. */
  patternIds: string[];
  /** Lineage: every production trace behind a row. */
  sourceTraceIds: string[];
  params: Record<string, unknown>;
  stats: Record<string, number>;
  rowCount: number;
  /** `api`, or `schedule:<name>` for scheduled synthesis. */
  createdBy: string;
  createdAt: string;
}

/** A stored dataset with its rows. */
export interface StoredDataset extends DatasetInfo {
  rows: Dataset["rows"];
}

/** The id a dataset is stored under: derived from its version, so the same content always gets the same id. */
export function datasetId(version: string): string {
  return `ds_${version.replace(/^sha256:/, "").slice(0, 16)}`;
}

const infoColumns =
  "id, kind, version, seed, pattern_ids, source_trace_ids, params, stats, row_count, created_by, created_at";

function toInfo(r: Row): DatasetInfo {
  return {
    id: r.id as string,
    kind: r.kind as DatasetKind,
    version: r.version as string,
    seed: Number(r.seed),
    patternIds: r.pattern_ids as string[],
    sourceTraceIds: r.source_trace_ids as string[],
    params: r.params as Record<string, unknown>,
    stats: r.stats as Record<string, number>,
    rowCount: r.row_count as number,
    createdBy: r.created_by as string,
    createdAt: new Date(r.created_at as string).toISOString(),
  };
}

/**
 * Stores a dataset once: a dataset whose version is already stored is not written again (datasets are immutable;
 * a trigger refuses updates and deletes). Returns the stored one and whether this call created it.
 */
export async function saveDataset(
  db: Queryable,
  dataset: Dataset,
  createdBy: string,
): Promise<{ dataset: DatasetInfo; created: boolean }> {
  const sources = [...new Set(dataset.rows.flatMap((r) => r.meta.sourceTraceIds))].sort();
  const inserted = await db.query(
    `insert into datasets (tenant_id, id, kind, version, seed, pattern_ids, source_trace_ids, params, stats,
                           row_count, rows, created_by)
     values ($1, $2, $3, $4, $5, $6::text[], $7::text[], $8::jsonb, $9::jsonb, $10, $11::jsonb, $12)
     on conflict (tenant_id, version) do nothing returning ${infoColumns}`,
    [
      dataset.tenantId,
      datasetId(dataset.version),
      dataset.kind,
      dataset.version,
      dataset.createdFrom.seed,
      dataset.createdFrom.patternIds,
      sources,
      JSON.stringify(dataset.createdFrom.params),
      JSON.stringify(dataset.stats),
      dataset.rows.length,
      JSON.stringify(dataset.rows),
      createdBy,
    ],
  );
  if (inserted[0]) return { dataset: toInfo(inserted[0]), created: true };
  const [existing] = await db.query(
    `select ${infoColumns} from datasets where tenant_id = $1 and version = $2`,
    [dataset.tenantId, dataset.version],
  );
  return { dataset: toInfo(existing), created: false };
}

/** A tenant's datasets, newest first, optionally of one kind. */
export async function listDatasets(
  db: Queryable,
  tenantId: string,
  query: { kind?: DatasetKind; limit?: number } = {},
): Promise<DatasetInfo[]> {
  const rows = await db.query(
    `select ${infoColumns} from datasets where tenant_id = $1 and ($2::text is null or kind = $2)
      order by created_at desc, id limit $3`,
    [tenantId, query.kind ?? null, query.limit ?? 100],
  );
  return rows.map(toInfo);
}

/** One dataset of a tenant with its rows; NotFoundError (404) when the tenant has no such dataset. */
export async function getDataset(db: Queryable, tenantId: string, id: string): Promise<StoredDataset> {
  const [row] = await db.query(`select ${infoColumns}, rows from datasets where tenant_id = $1 and id = $2`, [
    tenantId,
    id,
  ]);
  if (!row) throw new NotFoundError(`no dataset with id "${id}"`);
  return { ...toInfo(row), rows: row.rows as Dataset["rows"] };
}

/** Every stored dataset of a tenant of these kinds, rows included (what overlap checks need). */
export async function datasetsOfKinds(
  db: Queryable,
  tenantId: string,
  kinds: DatasetKind[],
): Promise<Dataset[]> {
  const rows = await db.query(
    "select kind, version, seed, pattern_ids, params, stats, rows from datasets where tenant_id = $1 and kind = any($2::text[])",
    [tenantId, kinds],
  );
  return rows.map((r) => ({
    kind: r.kind as DatasetKind,
    tenantId,
    version: r.version as string,
    createdFrom: {
      seed: Number(r.seed),
      patternIds: r.pattern_ids as string[],
      params: r.params as Record<string, unknown>,
    },
    rows: r.rows as Dataset["rows"],
    stats: r.stats as Record<string, number>,
  }));
}
