import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { ArcError, type ChosenCandidate, InvalidInputError } from "@arc/core";
import { judgeCoverageShortfall, loadRecipe, type Recipe, type StepRecord } from "@arc/rl";
import type { RegistrySetup } from "../failures/index.ts";
import { tenantTaskFamilies, writeTenantFamilies } from "../families/task-family-store.ts";
import { judgeTrust } from "../judges/judge-trust.ts";
import type { Database, Queryable } from "../store/database.ts";
import { createApiKey, revokeApiKey } from "../store/keys.ts";
import {
  getModelVersion,
  listModelVersions,
  type ModelVersion,
  registerModelVersion,
} from "../store/model-registry.ts";
import { buildRunDatasets, exportRunDataset, runDataset } from "./build-run-datasets.ts";
import { rewardedByTenantJudge } from "./judge-reward-overrides.ts";
import { type RayJobRunRequest, trainOnRayJob } from "./ray-job-run.ts";
import {
  finishRun,
  getRun,
  type RunRecord,
  reportProgress,
  shownRecipePath,
  TENANT_TRIGGER,
  withoutServerPaths,
} from "./run-store.ts";
import { checkTenantRunOverrides } from "./tenant-run-overrides.ts";
import {
  REPOSITORY_ROOT,
  type TrainProcessOutcome,
  type TrainProcessRequest,
  trainInChildProcess,
} from "./train-process.ts";

/** What running one claimed run needs. */
export interface ExecuteRunContext {
  /** The server process that holds the claim (`runs.owner`). */
  owner: string;
  pollMs: number;
  /** Pool rows (and cap of the eval/preference sets) when the run builds its datasets. */
  datasetSize: number;
  setupRegistry?: RegistrySetup;
  preferenceCandidates?: Record<string, ChosenCandidate[]>;
  /** Aborting stops the run after its current step, or kills its trainer after `stopWithinMs`. */
  signal?: AbortSignal;
  /** How long an aborted run may take to stop after its step before its trainer is killed (default 8 s). */
  stopWithinMs?: number;
  /**
   * Time (epoch ms) at which training stops after its current step and the checkpoint it wrote then becomes the
   * candidate (a time-boxed run, e.g. the demo's); the run's metrics say `stoppedAtDeadline: true`.
   */
  deadline?: number;
  /** Where a training job on a cluster reaches this server's API (a VERL job's reward module scores through it). */
  publicUrl?: string;
  /** What an abort means: `cancel` ends the run cancelled; `requeue` (a server shutting down) hands it back to be resumed. */
  onAbort: "cancel" | "requeue";
  /** Every poll of a running run: the new step records and the run's row after the update. */
  onProgress?: (run: RunRecord, fresh: StepRecord[]) => void;
  onLog?: (line: string) => void;
}

/** How one run ended. */
export interface ExecuteRunResult {
  run: RunRecord;
  /** The registered candidate; null unless the run succeeded. */
  candidate: ModelVersion | null;
  records: StepRecord[];
}

/**
 * The figures a run's row shows: the latest step's, the held-out failure rate at its start and now, and a judge
 * reward's calls and tokens so far.
 */
export function metricsSummary(records: StepRecord[]): Record<string, unknown> {
  const last = records.at(-1);
  const judged = [...records].reverse().find((r) => r.extra.judgeCalls !== undefined);
  const evals = records.filter((r) => r.evalFailureRate !== undefined);
  const lastTrained = [...records].reverse().find((r) => r.reward !== null || r.loss !== null);
  return {
    loss: lastTrained?.loss ?? null,
    reward: lastTrained?.reward ?? null,
    accuracy: lastTrained?.accuracy ?? null,
    tokensPerSecond: last?.tokensPerSecond ?? null,
    elapsedS: last?.elapsedS ?? null,
    heldOutFailureRateStart: evals[0]?.evalFailureRate ?? null,
    heldOutFailureRate: evals.at(-1)?.evalFailureRate ?? null,
    ...(judged ? { judgeCalls: judged.extra.judgeCalls, judgeTokens: judged.extra.judgeTokens } : {}),
  };
}

/** Resolves a recipe path: absolute as given, else relative to the repository root (where `recipes/` ships). */
export function recipeFile(path: string): string {
  const file = isAbsolute(path) ? path : join(REPOSITORY_ROOT, path);
  if (!existsSync(file)) {
    throw new InvalidInputError(
      `recipe: expected a recipe file, "${shownRecipePath(path)}" does not exist${isAbsolute(path) ? "" : " in the repository"}`,
      { field: "recipe" },
    );
  }
  return file;
}

/** The tenant's production model: the promoted version with a checkpoint the embedded trainer can start from. */
export async function productionModel(db: Queryable, tenantId: string): Promise<ModelVersion> {
  const [production] = await listModelVersions(db, tenantId, ["promoted"]);
  if (!production) {
    throw new InvalidInputError(
      "no production model: register one with status promoted (arc models, POST /v1/model-versions)",
      { field: "baseModelId" },
    );
  }
  if (!production.artifactDir) {
    throw new InvalidInputError(
      `production model ${production.name} is upstream-only; the embedded trainer needs a checkpoint (artifactDir)`,
      { field: "baseModelId" },
    );
  }
  return production;
}

/** The datasets of a run: built now on its first attempt, re-exported from the store when it resumes. */
async function datasetsFor(db: Database, run: RunRecord, ctx: ExecuteRunContext, dataDir: string) {
  const { env } = (
    await loadRecipe(
      recipeFile(run.recipePath),
      run.overrides,
      shownRecipePath(run.recipePath),
      await tenantTaskFamilies(db, run.tenantId),
    )
  ).data;
  if (run.datasets.length > 0) {
    const pathOf = async (kind: string) => {
      const d = run.datasets.find((x) => x.kind === kind);
      return d ? (await exportRunDataset(db, run.tenantId, d.id, dataDir, env)).path : null;
    };
    return { poolPath: await pathOf("prompts"), preferencesPath: await pathOf("preferences") };
  }
  const built = await buildRunDatasets(db, run.tenantId, {
    dir: dataDir,
    seed: Number.parseInt(run.id.replace(/[^0-9a-f]/g, "").slice(-6) || "0", 16),
    size: ctx.datasetSize,
    env,
    createdBy: `run:${run.id}`,
    setupRegistry: ctx.setupRegistry,
    preferenceCandidates: ctx.preferenceCandidates,
  });
  if (built.poolRows === 0) {
    throw new InvalidInputError(
      `no verifiable ${env} failure to train on: the prompt pool has no ${env} row (traces need a solution the tenant's registry can resolve, and the recipe's data.env must be their env)`,
      { field: "datasets" },
    );
  }
  const datasets = [built.pool, built.preferences, built.evalSet].flatMap((d) => (d ? [runDataset(d)] : []));
  await reportProgress(db, run.tenantId, run.id, ctx.owner, {
    datasets,
    patterns: built.patterns,
    sourceTraceCount: built.sourceTraceCount,
  });
  return { poolPath: built.poolPath, preferencesPath: built.preferencesPath };
}

/** Registers the run's final checkpoint as a `candidate` with full lineage, once (a resumed run finds it). */
async function registerCandidate(
  db: Database,
  run: RunRecord,
  base: ModelVersion,
  checkpoint: string,
  records: StepRecord[],
  stoppedAtDeadline: boolean,
): Promise<ModelVersion> {
  const name = `${run.id}/final`;
  try {
    return await getModelVersion(db, run.tenantId, name);
  } catch (error) {
    if (!(ArcError.isInstance(error) && error.statusCode === 404)) throw error;
  }
  return registerModelVersion(db, run.tenantId, {
    name,
    status: "candidate",
    parentId: base.id,
    artifactDir: checkpoint,
    actor: `system:${run.trigger === "orchestrator" ? "orchestrator" : `run:${run.trigger}`}`,
    lineage: {
      runId: run.id,
      baseModel: base.id,
      recipe: run.recipePath,
      recipeHash: run.recipeHash ?? undefined,
      overrides: run.overrides,
      datasets: run.datasets.map((d) => ({ id: d.id, version: d.version, kind: d.kind })),
      patterns: run.patterns,
      sourceTraceCount: run.sourceTraceCount,
      trigger: run.trigger,
    },
    metrics: { ...metricsSummary(records), steps: records.at(-1)?.step ?? 0, stoppedAtDeadline },
  });
}

/**
 * Trains a run as a Ray job on its recipe's cluster (`trainOnRayJob`). A VERL job scores its samples through this
 * server's API, with a key of the run's tenant made for the job and revoked when it ends.
 */
async function onCluster(
  db: Database,
  run: RunRecord,
  recipe: Recipe,
  ctx: ExecuteRunContext,
  training: Omit<RayJobRunRequest, "recipe" | "attempt" | "env" | "metadata">,
) {
  if (recipe.trainer.backend !== "verl")
    return trainOnRayJob({
      ...training,
      recipe,
      attempt: run.attempts,
      metadata: { arc_tenant_id: run.tenantId },
    });
  if (!ctx.publicUrl)
    throw new InvalidInputError(
      "trainer.backend verl: the job's rewards are scored through this server's API, and it has no address for it (ARC_PUBLIC_URL)",
      { field: "ARC_PUBLIC_URL" },
    );
  const key = await createApiKey(db, { role: "tenant", tenantId: run.tenantId }, `verl job of run ${run.id}`);
  try {
    return await trainOnRayJob({
      ...training,
      recipe,
      attempt: run.attempts,
      env: { ARC_URL: ctx.publicUrl, ARC_API_KEY: key.key },
      metadata: { arc_tenant_id: run.tenantId },
    });
  } finally {
    await revokeApiKey(db, key.id, run.tenantId);
  }
}

/**
 * Runs a run this owner has claimed to its end: builds (or re-exports) its datasets, trains from the tenant's
 * production model in an `arc train` child process (resuming from the last checkpoint when the run has one),
 * mirrors progress into its row, and on success registers the final checkpoint as a `candidate` for the validator.
 * A run a tenant asked for (TENANT_TRIGGER) has its stored overrides checked again, as its request's were, before
 * anything reaches the trainer: the row is what runs. Never throws for a failure of the run itself: the row says
 * `failed` with the error, without server paths (the trainer's stderr names the repository and `<ARC_HOME>`).
 */
export async function executeRun(
  db: Database,
  claimed: RunRecord,
  ctx: ExecuteRunContext,
): Promise<ExecuteRunResult> {
  const soFar: AttemptSoFar = { run: claimed, records: [] };
  try {
    return await trainRun(db, soFar, ctx);
  } catch (error) {
    const { run, records } = soFar;
    // a run killed because this server is stopping did not fail: it resumes from its last checkpoint
    if (ctx.signal?.aborted && ctx.onAbort === "requeue")
      return { run: await requeue(db, run, ctx.owner), candidate: null, records };
    const ended = await finishRun(db, run.tenantId, run.id, ctx.owner, {
      status: "failed",
      error: withoutServerPaths((error as Error).message, run.runsDir),
    });
    return { run: ended ?? (await getRun(db, run.tenantId, run.id)), candidate: null, records };
  }
}

/** The run's row and its step records as far as an attempt got: what a failed attempt reports. */
interface AttemptSoFar {
  run: RunRecord;
  records: StepRecord[];
}

/** Why training stopped early, as the polls saw it: a cancel request, or the run's deadline reached. */
interface StopSeen {
  cancelled: boolean;
  deadlineHit: boolean;
}

/**
 * One attempt at a run: its checks, base model, datasets and recipe, the training, then `settleRun`. Keeps `soFar`
 * up to date, so that a throw is reported with the records written until then.
 */
async function trainRun(
  db: Database,
  soFar: AttemptSoFar,
  ctx: ExecuteRunContext,
): Promise<ExecuteRunResult> {
  const run = soFar.run;
  await checkRunMayStart(db, run);
  const base = await baseModelOf(db, run);
  await reportProgress(db, run.tenantId, run.id, ctx.owner, { baseModelId: base.id });
  const runDir = resolve(run.runsDir, run.id);
  const datasets = await datasetsFor(db, run, ctx, join(runDir, "data"));
  const overrides = [
    `model.path=${base.artifactDir}`,
    ...(datasets.poolPath ? [`data.prompts=${datasets.poolPath}`] : []),
    ...(datasets.preferencesPath
      ? [`data.preferences=${datasets.preferencesPath}`, "data.preferenceMix=0.5"]
      : []),
    ...run.overrides,
  ];
  const families = await tenantTaskFamilies(db, run.tenantId);
  // a run that started resumes with the recipe it saved then (`arc train --resume` reads the same file)
  const resume = existsSync(join(runDir, "state.json"));
  const recipe = await runRecipe(run, runDir, resume, overrides, families);
  const stop: StopSeen = { cancelled: false, deadlineHit: false };
  const training = {
    runsDir: resolve(run.runsDir),
    runId: run.id,
    recipePath: recipeFile(run.recipePath),
    overrides,
    familyFiles: await writeTenantFamilies(db, run.tenantId, join(runDir, "families")),
    resume,
    pollMs: ctx.pollMs,
    onLog: ctx.onLog,
    signal: ctx.signal,
    stopWithinMs: ctx.stopWithinMs,
    onPoll: mirrorProgress(db, run, ctx, soFar.records, stop),
  };
  if (recipe.trainer.backend === "verl" && !recipe.cluster.jobsUrl)
    throw new InvalidInputError(
      "trainer.backend verl: set cluster.jobsUrl, the dashboard of the Ray cluster the VERL job runs on",
      { field: "cluster.jobsUrl" },
    );
  const outcome = recipe.cluster.jobsUrl
    ? await onCluster(db, run, recipe, ctx, { ...training, families })
    : await trainInChildProcess(training);
  soFar.records = outcome.records;
  return settleRun(db, soFar, ctx, { recipe, base, outcome, stop });
}

/**
 * Refuses a run that may not start: a tenant's run whose stored overrides no longer pass the request's check, or a
 * run rewarded by the tenant's judge while that judge is not trusted.
 */
async function checkRunMayStart(db: Database, run: RunRecord): Promise<void> {
  if (run.trigger === TENANT_TRIGGER) {
    try {
      checkTenantRunOverrides(run.overrides, await tenantTaskFamilies(db, run.tenantId));
    } catch (error) {
      throw new InvalidInputError(`run ${run.id} was not started: ${(error as Error).message}`, {
        field: "overrides",
      });
    }
  }
  if (rewardedByTenantJudge(run.overrides)) {
    const trust = await judgeTrust(db, run.tenantId);
    if (!trust.trusted)
      throw new InvalidInputError(
        `run ${run.id} was not started: its reward is the tenant's judge, which is not trusted yet: ${trust.reason}`,
        { field: "reward.judge" },
      );
  }
}

/** The model the run trains from: the one it names, else the tenant's production model; it must have a checkpoint. */
async function baseModelOf(db: Database, run: RunRecord): Promise<ModelVersion> {
  const base = run.baseModelId
    ? await getModelVersion(db, run.tenantId, run.baseModelId)
    : await productionModel(db, run.tenantId);
  if (!base.artifactDir) throw new InvalidInputError(`base model ${base.name} has no checkpoint`);
  return base;
}

/** The run's recipe: as the run saved it when it resumes, else the recipe file with the run's overrides. */
async function runRecipe(
  run: RunRecord,
  runDir: string,
  resume: boolean,
  overrides: string[],
  families: Awaited<ReturnType<typeof tenantTaskFamilies>>,
): Promise<Recipe> {
  const savedRecipe = join(runDir, "recipe.yaml");
  return resume && existsSync(savedRecipe)
    ? await loadRecipe(savedRecipe, [], `${shownRecipePath(run.recipePath)} (as the run saved it)`, families)
    : await loadRecipe(recipeFile(run.recipePath), overrides, shownRecipePath(run.recipePath), families);
}

/**
 * The training's poll: adds the fresh records to `records`, mirrors them into the run's row, notes a cancel request
 * or the deadline in `stop`, and says `stop` when the run was cancelled, lost, aborted or is past its deadline.
 */
function mirrorProgress(
  db: Database,
  run: RunRecord,
  ctx: ExecuteRunContext,
  records: StepRecord[],
  stop: StopSeen,
): TrainProcessRequest["onPoll"] {
  return async (fresh, state) => {
    records.push(...fresh);
    const report = await reportProgress(db, run.tenantId, run.id, ctx.owner, {
      step: state?.step,
      totalSteps: state?.totalSteps,
      metrics: fresh.length > 0 ? metricsSummary(records) : undefined,
    });
    stop.cancelled ||= report.cancelRequested;
    if (fresh.length > 0) ctx.onProgress?.(await getRun(db, run.tenantId, run.id), fresh);
    stop.deadlineHit ||= ctx.deadline !== undefined && Date.now() >= ctx.deadline;
    return report.cancelRequested || report.lost || ctx.signal?.aborted || stop.deadlineHit
      ? "stop"
      : "continue";
  };
}

/**
 * Ends a trained run: its last figures into its row, then cancelled (or requeued when this server is stopping),
 * or a candidate registered from its checkpoint. A run stopped at its deadline with a checkpoint counts as done;
 * a run whose judge scored too few samples fails.
 */
async function settleRun(
  db: Database,
  soFar: AttemptSoFar,
  ctx: ExecuteRunContext,
  trained: { recipe: Recipe; base: ModelVersion; outcome: TrainProcessOutcome; stop: StopSeen },
): Promise<ExecuteRunResult> {
  const { owner } = ctx;
  const { recipe, base, outcome, stop } = trained;
  const records = soFar.records;
  const { tenantId, id } = soFar.run;
  await reportProgress(db, tenantId, id, owner, {
    step: outcome.state.step,
    totalSteps: outcome.state.totalSteps,
    metrics: metricsSummary(records),
    recipeHash: outcome.recipeHash,
  });
  const run = await getRun(db, tenantId, id);
  soFar.run = run;
  const timeBoxed =
    stop.deadlineHit && !stop.cancelled && !ctx.signal?.aborted && outcome.checkpoint !== null;
  if (outcome.state.status === "cancelled" && !timeBoxed) {
    if (!stop.cancelled && ctx.signal?.aborted && ctx.onAbort === "requeue")
      return { run: await requeue(db, run, owner), candidate: null, records };
    return {
      run: (await finishRun(db, tenantId, id, owner, { status: "cancelled" })) ?? run,
      candidate: null,
      records,
    };
  }
  if (!(outcome.state.status === "completed" || timeBoxed) || !outcome.checkpoint) {
    throw new Error(outcome.state.error ?? `run ended ${outcome.state.status} without a checkpoint`);
  }
  const starved = judgeStarvation(recipe, records);
  if (starved) throw new Error(starved);
  if (timeBoxed) await reportProgress(db, tenantId, id, owner, { metrics: { stoppedAtDeadline: true } });
  const candidate = await registerCandidate(db, run, base, outcome.checkpoint, records, timeBoxed);
  const ended = await finishRun(db, tenantId, id, owner, { status: "succeeded", candidateId: candidate.id });
  return { run: ended ?? (await getRun(db, tenantId, id)), candidate, records };
}

/** Why a judge-rewarded run's judge scored too few of its last step's samples to trust; undefined when it did. */
function judgeStarvation(recipe: Recipe, records: StepRecord[]): string | undefined {
  const judged = records.at(-1)?.extra;
  return recipe.reward.judge && judged?.judgeScored !== undefined
    ? judgeCoverageShortfall(
        { scored: judged.judgeScored, unjudged: judged.judgeUnjudged ?? 0 },
        recipe.reward.judge.minScoredShare,
      )
    : undefined;
}

/** Hands a run this server is shutting down on back to the queue; the next claim resumes it. */
async function requeue(db: Queryable, run: RunRecord, owner: string): Promise<RunRecord> {
  await db.query(
    "update runs set status = 'queued', owner = null where tenant_id = $1 and id = $2 and owner = $3",
    [run.tenantId, run.id, owner],
  );
  return getRun(db, run.tenantId, run.id);
}
