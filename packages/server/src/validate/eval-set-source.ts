import { type Dataset, type EvalRow, InvalidInputError } from "@arc/core";
import { getDataset, listDatasets } from "../failures/dataset-store.ts";
import type { Queryable } from "../store/database.ts";

/** A frozen EvalSet as the validator reads it: its content version and rows (core `buildEvalSet` output). */
export interface EvalSetRef {
  version: string;
  rows: readonly EvalRow[];
}

/**
 * Where the validator finds a tenant's frozen EvalSets: `PipelineEvalSets` reads the failure pipeline's dataset store
 * and those handed over directly (`POST /v1/eval-sets`, kept by `StoredEvalSets`), whichever is newest.
 */
export interface EvalSetSource {
  /** The EvalSets to judge the tenant's next candidate on (empty when it has none). */
  evalSetsFor(tenantId: string): Promise<EvalSetRef[]>;
}

/** EvalSets kept in the `validation_eval_sets` table; the newest one is the one candidates are judged on. */
export class StoredEvalSets implements EvalSetSource {
  constructor(private readonly db: Queryable) {}

  /** Stores an EvalSet (idempotent by content version). */
  async put(
    tenantId: string,
    dataset: Pick<Dataset<"eval">, "kind" | "version" | "rows" | "createdFrom">,
  ): Promise<EvalSetRef> {
    if (dataset.kind !== "eval") {
      throw new InvalidInputError(`kind: expected "eval", got ${JSON.stringify(dataset.kind)}`, {
        field: "kind",
      });
    }
    if (!Array.isArray(dataset.rows) || dataset.rows.length === 0) {
      throw new InvalidInputError("rows: expected a non-empty array of eval rows", { field: "rows" });
    }
    dataset.rows.forEach((row, i) => {
      for (const key of ["id", "question", "env"] as const) {
        if (typeof row?.[key] !== "string" || !row[key]) {
          throw new InvalidInputError(`rows.${i}.${key}: expected a non-empty string`, {
            field: `rows.${i}.${key}`,
          });
        }
      }
      if (typeof row.meta?.slice !== "string") {
        throw new InvalidInputError(`rows.${i}.meta.slice: expected a pattern id or "general"`, {
          field: `rows.${i}.meta.slice`,
        });
      }
    });
    await this.db.query(
      `insert into validation_eval_sets (tenant_id, version, rows, created_from) values ($1, $2, $3, $4)
       on conflict do nothing`,
      [tenantId, dataset.version, JSON.stringify(dataset.rows), JSON.stringify(dataset.createdFrom ?? {})],
    );
    return { version: dataset.version, rows: dataset.rows };
  }

  async evalSetsFor(tenantId: string): Promise<EvalSetRef[]> {
    const rows = await this.db.query<{ version: string; rows: EvalRow[] }>(
      "select version, rows from validation_eval_sets where tenant_id = $1 order by created_at desc limit 1",
      [tenantId],
    );
    return rows.map((r) => ({ version: r.version, rows: r.rows }));
  }
}

/** The newest EvalSet of the failure pipeline's dataset store or of those handed over, whichever was made last. */
export class PipelineEvalSets implements EvalSetSource {
  constructor(
    private readonly db: Queryable,
    private readonly handed: StoredEvalSets,
  ) {}

  async evalSetsFor(tenantId: string): Promise<EvalSetRef[]> {
    const [synthesized] = await listDatasets(this.db, tenantId, { kind: "eval", limit: 1 });
    const handed = await this.db.query<{ created_at: string }>(
      "select created_at from validation_eval_sets where tenant_id = $1 order by created_at desc limit 1",
      [tenantId],
    );
    const handedAt = handed[0] ? Date.parse(new Date(handed[0].created_at).toISOString()) : -1;
    if (synthesized && Date.parse(synthesized.createdAt) >= handedAt) {
      const dataset = await getDataset(this.db, tenantId, synthesized.id);
      return [{ version: dataset.version, rows: dataset.rows as EvalRow[] }];
    }
    return this.handed.evalSetsFor(tenantId);
  }
}
