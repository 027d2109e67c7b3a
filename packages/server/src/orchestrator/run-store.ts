import { randomBytes } from "node:crypto";
import { basename, isAbsolute, join, parse, relative, resolve, sep } from "node:path";
import { InvalidInputError, NotFoundError } from "@arc/core";
import type { Queryable } from "../store/database.ts";
import { REPOSITORY_ROOT } from "./train-process.ts";

/** Where a server-side run stands. `queued → running → succeeded | failed | cancelled`. */
export type RunRowStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

/** A dataset a run trains or is judged on, as lineage. */
export interface RunDataset {
  id: string;
  version: string;
  kind: string;
  rows: number;
}

/** A training run as the server records it (`runs` table, migration 005). */
export interface RunRecord {
  id: string;
  tenantId: string;
  /** `orchestrator`, `api` (TENANT_TRIGGER) or the caller of `runImprovementCycle` (e.g. `demo`). */
  trigger: string;
  recipePath: string;
  /** `key=value` recipe overrides the run was asked for (the orchestrator adds model and data paths). */
  overrides: string[];
  /** `sha256:<hex>` of the resolved recipe the run wrote; null until it started. */
  recipeHash: string | null;
  /** The production model version it trains from. */
  baseModelId: string | null;
  datasets: RunDataset[];
  /** Failure patterns its datasets draw on. */
  patterns: string[];
  /** Distinct production traces behind its training datasets. */
  sourceTraceCount: number;
  status: RunRowStatus;
  cancelRequested: boolean;
  step: number;
  totalSteps: number | null;
  /** Latest figures: loss, reward, accuracy, held-out failure rate at the start and now, tokens/s, elapsed seconds. */
  metrics: Record<string, unknown>;
  /** The ModelVersion its final checkpoint became. */
  candidateId: string | null;
  /** The folder holding `<id>/` (recipe.yaml, state.json, metrics.jsonl, checkpoints). */
  runsDir: string;
  /** The server process that runs it now. */
  owner: string | null;
  /** How many times a server has started or resumed it. */
  attempts: number;
  heartbeatAt: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  error: string | null;
}

/**
 * The trigger of a run a tenant asked for (`POST /v1/runs`): its overrides are the tenant's, so they are checked
 * against TUNABLE_RECIPE_KEYS when it is queued and again when it starts.
 */
export const TENANT_TRIGGER = "api";

/** A run as its tenant sees it: without the server's runs folder, and with no server path in its text. */
export type TenantRun = Omit<RunRecord, "runsDir">;

/**
 * The server folders a run's text may name: `<ARC_HOME>` (its runs folder is `<ARC_HOME>/artifacts/<tenantId>/runs`,
 * see tenantRunsDir) and the repository root, the innermost first.
 */
function serverFolders(runsDir: string): string[] {
  return [resolve(runsDir, "..", "..", ".."), REPOSITORY_ROOT]
    .filter((folder) => folder !== parse(folder).root)
    .sort((a, b) => b.length - a.length);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * `text` without the server's folders: a path under `<ARC_HOME>` becomes relative to it (`artifacts/<tenantId>/...`),
 * one under the repository root repository-relative (`recipes/corrections-dpo.yaml`). `runsDir` is the run's.
 */
export function withoutServerPaths(text: string, runsDir: string): string {
  let out = text;
  for (const folder of serverFolders(runsDir)) {
    const pattern = new RegExp(`${escapeRegExp(folder)}(?:${escapeRegExp(sep)}|(?![\\w.-]))`, "g");
    out = out.replace(pattern, (match) => (match === folder ? "." : ""));
  }
  return out;
}

/** A path as a tenant sees it: relative as given, else relative to one of `folders`, else the file's name alone. */
function shownPath(path: string, folders: string[]): string {
  if (!isAbsolute(path)) return path;
  for (const folder of folders) {
    const inside = relative(folder, path);
    if (inside !== ".." && !inside.startsWith(`..${sep}`) && !isAbsolute(inside)) return inside || ".";
  }
  return basename(path);
}

/** A recipe path as a tenant sees it: repository-relative, or the file's name (an operator's recipe elsewhere). */
export function shownRecipePath(path: string): string {
  return shownPath(path, [REPOSITORY_ROOT]);
}

/** Overrides whose values are the server's (the judge endpoint the orchestrator gives a run): a tenant sees them hidden. */
const SERVER_ONLY_OVERRIDES = new Set(["reward.judge.baseUrl", "reward.judge.apiKeyEnv"]);

/**
 * What a tenant is shown of a run: no `runsDir`; its recipe path, and the path values of its overrides (the
 * operator's, on an orchestrator run), relative to a server folder or by file name, the judge endpoint's hidden;
 * its error without the repository root and `<ARC_HOME>`.
 */
export function tenantRun(run: RunRecord): TenantRun {
  const { runsDir, ...shown } = run;
  const folders = serverFolders(runsDir);
  return {
    ...shown,
    recipePath: shownPath(run.recipePath, folders),
    overrides: run.overrides.map((override) => {
      const eq = override.indexOf("=");
      if (eq < 0) return override;
      const key = override.slice(0, eq);
      if (SERVER_ONLY_OVERRIDES.has(key)) return `${key}=(the server's judge upstream)`;
      return `${key}=${shownPath(override.slice(eq + 1), folders)}`;
    }),
    error: run.error === null ? null : withoutServerPaths(run.error, runsDir),
  };
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function fromRow(r: Record<string, unknown>): RunRecord {
  return {
    id: r.id as string,
    tenantId: r.tenant_id as string,
    trigger: r.trigger as string,
    recipePath: r.recipe_path as string,
    overrides: r.overrides as string[],
    recipeHash: (r.recipe_hash as string | null) ?? null,
    baseModelId: (r.base_model_id as string | null) ?? null,
    datasets: r.datasets as RunDataset[],
    patterns: r.patterns as string[],
    sourceTraceCount: Number(r.source_trace_count),
    status: r.status as RunRowStatus,
    cancelRequested: r.cancel_requested as boolean,
    step: Number(r.step),
    totalSteps: r.total_steps === null ? null : Number(r.total_steps),
    metrics: r.metrics as Record<string, unknown>,
    candidateId: (r.candidate_id as string | null) ?? null,
    runsDir: r.runs_dir as string,
    owner: (r.owner as string | null) ?? null,
    attempts: Number(r.attempts),
    heartbeatAt: iso(r.heartbeat_at),
    createdAt: iso(r.created_at) as string,
    startedAt: iso(r.started_at),
    endedAt: iso(r.ended_at),
    error: (r.error as string | null) ?? null,
  };
}

/** Where a tenant's runs live: `<artifacts>/<tenantId>/runs/<runId>/` (checkpoints are the tenant's artifacts). */
export function tenantRunsDir(artifactsDir: string, tenantId: string): string {
  return join(resolve(artifactsDir), tenantId, "runs");
}

/** A new run id: `run_` + UTC time + random suffix (sortable, safe as a folder name). */
export function newServerRunId(): string {
  const time = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*/, "").replace("T", "-");
  return `run_${time}_${randomBytes(3).toString("hex")}`;
}

/** Records a queued run; a worker (or the caller) claims it to run it. */
export async function createRun(
  db: Queryable,
  tenantId: string,
  input: {
    id?: string;
    trigger: string;
    recipePath: string;
    overrides?: string[];
    runsDir: string;
    baseModelId?: string | null;
    status?: "queued" | "running";
    owner?: string;
  },
): Promise<RunRecord> {
  const id = input.id ?? newServerRunId();
  if (!/^[A-Za-z0-9_-]{1,120}$/.test(id)) {
    throw new InvalidInputError(`id: expected letters, digits, _ or - (at most 120), got "${id}"`, {
      field: "id",
    });
  }
  const running = input.status === "running";
  const rows = await db.query(
    `insert into runs (tenant_id, id, trigger, recipe_path, overrides, runs_dir, base_model_id, status, owner,
                       attempts, started_at, heartbeat_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, case when $10 > 0 then now() end,
             case when $10 > 0 then now() end)
     returning *`,
    [
      tenantId,
      id,
      input.trigger,
      input.recipePath,
      JSON.stringify(input.overrides ?? []),
      input.runsDir,
      input.baseModelId ?? null,
      running ? "running" : "queued",
      running ? (input.owner ?? null) : null,
      running ? 1 : 0,
    ],
  );
  return fromRow(rows[0]);
}

/** One run of this tenant. */
export async function getRun(db: Queryable, tenantId: string, id: string): Promise<RunRecord> {
  const rows = await db.query("select * from runs where tenant_id = $1 and id = $2", [tenantId, id]);
  if (!rows[0]) throw new NotFoundError(`no run "${id}"`);
  return fromRow(rows[0]);
}

/** A tenant's runs, newest first. */
export async function listRuns(
  db: Queryable,
  tenantId: string,
  options: { statuses?: RunRowStatus[]; limit?: number } = {},
): Promise<RunRecord[]> {
  const rows = await db.query(
    `select * from runs where tenant_id = $1 and ($2::text[] is null or status = any($2))
     order by created_at desc, id desc limit $3`,
    [tenantId, options.statuses ?? null, options.limit ?? 100],
  );
  return rows.map(fromRow);
}

/**
 * Claims the oldest queued run of any tenant, or a running one whose owner stopped heartbeating for `staleMs`
 * (its server died), for `owner`. `FOR UPDATE SKIP LOCKED`: two servers on one database never claim the same run.
 */
export async function claimRun(
  db: Queryable,
  owner: string,
  options: { staleMs: number; tenantId?: string },
): Promise<RunRecord | null> {
  const rows = await db.query(
    `update runs set status = 'running', owner = $1, attempts = attempts + 1, heartbeat_at = now(),
                     started_at = coalesce(started_at, now())
     where (tenant_id, id) = (
       select tenant_id, id from runs
       where ($3::text is null or tenant_id = $3)
         and ((status = 'queued' and not cancel_requested)
              or (status = 'running' and heartbeat_at < now() - $2 * interval '1 millisecond'))
       order by created_at, id
       for update skip locked
       limit 1)
     returning *`,
    [owner, options.staleMs, options.tenantId ?? null],
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

/** What a running run reports as it goes; null fields are left as they are. */
export interface RunProgress {
  step?: number;
  totalSteps?: number;
  metrics?: Record<string, unknown>;
  recipeHash?: string;
  datasets?: RunDataset[];
  patterns?: string[];
  sourceTraceCount?: number;
  baseModelId?: string;
}

/**
 * Records progress and renews the owner's heartbeat; returns whether a cancel was requested. Refuses (returns
 * `lost: true`) when another server claimed the run meanwhile, so a stalled owner stops instead of running it twice.
 */
export async function reportProgress(
  db: Queryable,
  tenantId: string,
  id: string,
  owner: string,
  progress: RunProgress,
): Promise<{ cancelRequested: boolean; lost: boolean }> {
  const rows = await db.query<{ cancel_requested: boolean }>(
    `update runs set heartbeat_at = now(),
       step = coalesce($4, step), total_steps = coalesce($5, total_steps),
       metrics = metrics || coalesce($6::jsonb, '{}'), recipe_hash = coalesce($7, recipe_hash),
       datasets = coalesce($8::jsonb, datasets), patterns = coalesce($9::jsonb, patterns),
       source_trace_count = coalesce($10, source_trace_count), base_model_id = coalesce($11, base_model_id)
     where tenant_id = $1 and id = $2 and owner = $3 and status = 'running'
     returning cancel_requested`,
    [
      tenantId,
      id,
      owner,
      progress.step ?? null,
      progress.totalSteps ?? null,
      progress.metrics ? JSON.stringify(progress.metrics) : null,
      progress.recipeHash ?? null,
      progress.datasets ? JSON.stringify(progress.datasets) : null,
      progress.patterns ? JSON.stringify(progress.patterns) : null,
      progress.sourceTraceCount ?? null,
      progress.baseModelId ?? null,
    ],
  );
  return { cancelRequested: rows[0]?.cancel_requested ?? false, lost: rows.length === 0 };
}

/** Ends a run this owner holds: succeeded (with its candidate), failed (with the error) or cancelled. */
export async function finishRun(
  db: Queryable,
  tenantId: string,
  id: string,
  owner: string,
  end: { status: "succeeded" | "failed" | "cancelled"; candidateId?: string; error?: string },
): Promise<RunRecord | null> {
  const rows = await db.query(
    `update runs set status = $4, candidate_id = coalesce($5, candidate_id), error = $6, ended_at = now(),
                     heartbeat_at = now()
     where tenant_id = $1 and id = $2 and owner = $3 and status = 'running' returning *`,
    [tenantId, id, owner, end.status, end.candidateId ?? null, end.error ?? null],
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

/** Asks a run to stop: a queued one is cancelled at once, a running one stops after its current step. */
export async function requestCancel(db: Queryable, tenantId: string, id: string): Promise<RunRecord> {
  const run = await getRun(db, tenantId, id);
  if (run.status !== "queued" && run.status !== "running") {
    throw new InvalidInputError(`run ${id} is ${run.status}; only a queued or running run can be cancelled`, {
      field: "status",
    });
  }
  const rows = await db.query(
    `update runs set cancel_requested = true,
       status = case when status = 'queued' then 'cancelled' else status end,
       ended_at = case when status = 'queued' then now() else ended_at end
     where tenant_id = $1 and id = $2 returning *`,
    [tenantId, id],
  );
  return fromRow(rows[0]);
}

/** Queued and running runs of every tenant, oldest first. */
export async function activeRuns(db: Queryable): Promise<RunRecord[]> {
  const rows = await db.query(
    "select * from runs where status in ('queued', 'running') order by created_at, tenant_id, id",
  );
  return rows.map(fromRow);
}

/** Runs of a tenant that are queued or running (the orchestrator starts no new one while there is one). */
export async function activeRunCount(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from runs where tenant_id = $1 and status in ('queued', 'running')",
    [tenantId],
  );
  return Number(row.n);
}
