import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ChosenCandidate } from "@arc/core";
import {
  type DatasetInfo,
  type DatasetRequestInput,
  exportDataset,
  getDataset,
  listPatterns,
  type RegistrySetup,
  type StoredDataset,
  synthesizeDataset,
} from "../failures/index.ts";
import { parseDatasetRequest } from "../failures/synthesize-dataset.ts";
import type { Database, Queryable } from "../store/database.ts";
import type { RunDataset } from "./run-store.ts";

/** The datasets one run trains and is judged on, exported where `arc train` reads them. */
export interface RunDatasets {
  evalSet: DatasetInfo;
  pool: DatasetInfo;
  /** Null when no failure had a chosen answer (no feedback correction, no candidate given). */
  preferences: DatasetInfo | null;
  /** JSONL of the pool's rows of the recipe's env (question/solution/env rows: `data.prompts`). */
  poolPath: string;
  /** Rows in `poolPath`. */
  poolRows: number;
  /** JSONL of the preference pairs (`data.preferences`), when there are any. */
  preferencesPath: string | null;
  /** Patterns the datasets draw on. */
  patterns: string[];
  /** Distinct production traces behind the training datasets. */
  sourceTraceCount: number;
}

/** What `buildRunDatasets` needs beyond the database and tenant. */
export interface BuildRunDatasetsOptions {
  /** Where the exported files go (the run's `data/` folder). */
  dir: string;
  seed: number;
  /** Pool rows; also the cap of the eval and preference sets. */
  size: number;
  /** The recipe's env: only the pool's rows of this env are exported (the trainer verifies one env per run). */
  env: string;
  /** `orchestrator`, `api`, `demo`...: recorded as the datasets' `createdBy`. */
  createdBy: string;
  /** The tenant's verifiers and solution resolver (as the failure service gets them). */
  setupRegistry?: RegistrySetup;
  /** Chosen answers by trace id for preference pairs (teacher or resampled outputs); feedback corrections are added. */
  preferenceCandidates?: Record<string, ChosenCandidate[]>;
}

/** Lineage entry of a dataset. */
export function runDataset(d: DatasetInfo): RunDataset {
  return { id: d.id, version: d.version, kind: d.kind, rows: d.rowCount };
}

/**
 * Builds an EvalSet, a PromptPool and (when chosen answers exist) a PreferenceSet from all of the tenant's failure
 * patterns through the failure pipeline's synthesis (stored, versioned, with lineage), and exports the training ones.
 */
export async function buildRunDatasets(
  db: Database,
  tenantId: string,
  options: BuildRunDatasetsOptions,
): Promise<RunDatasets> {
  const patterns = await listPatterns(db, tenantId, { limit: 1000 });
  const synth = async (request: DatasetRequestInput) =>
    (
      await synthesizeDataset(db, tenantId, parseDatasetRequest(request), {
        createdBy: options.createdBy,
        setupRegistry: options.setupRegistry,
      })
    ).dataset;
  const common = { fromPatterns: "all" as const, seed: options.seed };
  const evalSet = await synth({
    ...common,
    kind: "eval",
    perPattern: Math.max(1, Math.ceil(options.size / Math.max(1, patterns.length) / 4)),
    generalSize: Math.ceil(options.size / 8),
  });
  const pool = await synth({ ...common, kind: "prompts", size: options.size });
  const preferenceSet = await synth({
    ...common,
    kind: "preferences",
    candidates: options.preferenceCandidates ?? {},
  });
  const preferences = preferenceSet.rowCount > 0 ? preferenceSet : null;
  const exported = await exportRunDataset(db, tenantId, pool.id, options.dir, options.env);
  const preferencesPath = preferences
    ? (await exportRunDataset(db, tenantId, preferences.id, options.dir, options.env)).path
    : null;
  return {
    poolRows: exported.rows,
    evalSet,
    pool,
    preferences,
    poolPath: exported.path,
    preferencesPath,
    patterns: patterns.map((p) => p.id),
    sourceTraceCount: new Set([...pool.sourceTraceIds, ...(preferences?.sourceTraceIds ?? [])]).size,
  };
}

/**
 * Writes a stored dataset where `arc train` reads it: a PromptPool as question/solution/env JSONL with the rows of
 * `env` only, a PreferenceSet as prompt/chosen/rejected JSONL. Returns the file and its row count.
 */
export async function exportRunDataset(
  db: Queryable,
  tenantId: string,
  id: string,
  dir: string,
  env: string,
): Promise<{ path: string; rows: number }> {
  const stored = await getDataset(db, tenantId, id);
  const rows =
    stored.kind === "preferences"
      ? stored.rows
      : stored.rows.filter((r) => (r as { env?: string }).env === env);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${id}.jsonl`);
  const format = stored.kind === "preferences" ? "preferences" : "jsonl";
  await writeFile(path, exportDataset({ ...stored, rows } as StoredDataset, format).body);
  return { path, rows: rows.length };
}
