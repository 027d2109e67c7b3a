import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { appendFile, copyFile, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TaskFamilyRegistry } from "@arc/core";
import {
  type RayJobDetails,
  type RayJobStatus,
  RayJobsClient,
  TERMINAL_JOB_STATUSES,
  TORCH_WORKER_DIR,
} from "@arc/engine";
import {
  type Recipe,
  RunDir,
  type RunState,
  type StepRecord,
  shellWord,
  stepRecordsInLog,
  verlEntrypoint,
  verlOverrides,
  writeVerlData,
} from "@arc/rl";
import { stringify } from "yaml";
import { ARC_COMMAND, REPOSITORY_ROOT, type TrainProcessOutcome } from "./train-process.ts";
import { importVerlCheckpoint } from "./verl-checkpoint.ts";

/** The file, in a run's folder, that keeps its Ray job's log. */
export const JOB_LOG_FILE = "job.log";

/** Arc's reward module for VERL jobs (`compute_score`), copied into each job's folder. */
export const VERL_REWARD_MODULE = join(TORCH_WORKER_DIR, "arc_verl", "reward.py");

/** A run submitted to a Ray cluster as a job: Arc's own trainer (`arc train`) or VERL (`verl.trainer.main_ppo`). */
export interface RayJobRunRequest {
  runsDir: string;
  runId: string;
  /** The run's recipe with its overrides applied: its backend and cluster decide the job. */
  recipe: Recipe;
  /** Absolute recipe path and the overrides, for `arc train` (ignored on resume). */
  recipePath: string;
  overrides: string[];
  familyFiles?: string[];
  /** The task families the run's data is prompted and verified with (the tenant's own included). */
  families: TaskFamilyRegistry;
  /** Continue from the run's last checkpoint (`arc train --resume`); a VERL job resumes from its own checkpoints. */
  resume: boolean;
  /** The attempt of the run this job is (its submission id is `arc-<run>-<attempt>`, unique to Ray). */
  attempt: number;
  /** What the job's environment gets besides Arc's own: the API a VERL job's reward module scores through. */
  env?: Record<string, string>;
  metadata?: Record<string, string>;
  pollMs: number;
  /** Called with the step records parsed from the job's log since the last call, and the run's state. */
  onPoll(records: StepRecord[], state: RunState): Promise<"continue" | "stop">;
  onLog?: (line: string) => void;
}

/** The `arc train` entrypoint of a job that runs Arc's own trainer on the cluster (a local or shared runs folder). */
function arcEntrypoint(request: RayJobRunRequest): string {
  const arc = request.recipe.cluster.arcCommand ?? `${process.execPath} ${ARC_COMMAND}`;
  const families = (request.familyFiles ?? []).flatMap((file) => ["--family", file]);
  const train = request.resume
    ? ["train", "--resume", request.runId]
    : ["train", request.recipePath, ...request.overrides, "--run-id", request.runId];
  const words = [...families, ...train, "--runs-dir", request.runsDir, "--json-steps"].map(shellWord);
  return `cd ${shellWord(REPOSITORY_ROOT)} && exec ${arc} ${words.join(" ")}`;
}

/**
 * What a job's entrypoint asks Ray for. Arc's trainer on the torch engine with no `cluster.address` runs its workers
 * as local processes of the entrypoint, so the entrypoint asks for theirs: `gpusPerWorker` and `cpusPerWorker` for
 * each of `engine.processes` (its generator and evaluator share the first process's device). With an address the
 * workers are actors that ask for their own; the embedded engine trains in the entrypoint itself (its CPUs); VERL
 * places its own workers.
 */
export function jobEntrypointResources(recipe: Recipe): {
  entrypointNumCpus?: number;
  entrypointNumGpus?: number;
} {
  const { cluster, engine } = recipe;
  if (recipe.trainer.backend === "verl" || (engine.kind === "torch" && cluster.address)) return {};
  if (engine.kind !== "torch") return { entrypointNumCpus: cluster.cpusPerWorker };
  const gpus = cluster.gpusPerWorker * engine.processes;
  return {
    entrypointNumCpus: cluster.cpusPerWorker * engine.processes,
    ...(gpus > 0 ? { entrypointNumGpus: gpus } : {}),
  };
}

/** Writes a VERL job's data and reward module into `<run>/verl/`; returns its entrypoint and checkpoint folder. */
async function verlJob(request: RayJobRunRequest): Promise<{ entrypoint: string; checkpointDir: string }> {
  const dir = join(request.runsDir, request.runId, "verl");
  await mkdir(dir, { recursive: true });
  const data = await writeVerlData(request.recipe, dir, request.families);
  const rewardModule = join(dir, "arc_reward.py");
  await copyFile(VERL_REWARD_MODULE, rewardModule);
  const checkpointDir = join(dir, "checkpoints");
  const overrides = verlOverrides(request.recipe, {
    trainFile: data.trainFile,
    valFile: data.valFile,
    rewardModule,
    checkpointDir,
    experimentName: request.runId,
  });
  await writeFile(join(dir, "overrides.json"), `${JSON.stringify(overrides, null, 2)}\n`);
  return { entrypoint: verlEntrypoint(request.recipe, overrides, dir), checkpointDir };
}

/** The state a run is in once its job reached `status`. */
const RUN_STATUS: Record<RayJobStatus, RunState["status"]> = {
  PENDING: "running",
  RUNNING: "running",
  SUCCEEDED: "completed",
  STOPPED: "cancelled",
  FAILED: "failed",
};

/**
 * Runs a run as a Ray job and follows it through the Jobs REST API: submits the entrypoint (`arc train --json-steps`,
 * or VERL's main_ppo on the data and reward module written into the run's folder), polls the job's status and log,
 * hands the step records parsed from the log to `onPoll` and keeps the whole log in `<run>/job.log`, stops the job
 * when `onPoll` says so, and at its end finds the final checkpoint: the run folder's last (Arc's trainer), or VERL's
 * last `global_step_N/actor` imported in Hugging Face's layout. Throws with the job's message and last log lines when
 * it failed.
 */
export async function trainOnRayJob(request: RayJobRunRequest): Promise<TrainProcessOutcome> {
  const { recipe } = request;
  const url = recipe.cluster.jobsUrl as string;
  const jobs = new RayJobsClient({ url, token: process.env.ARC_RAY_TOKEN });
  const runDir = new RunDir(join(request.runsDir, request.runId));
  await mkdir(runDir.dir, { recursive: true });
  const verl = recipe.trainer.backend === "verl" ? await verlJob(request) : undefined;
  if (verl) {
    await writeFile(runDir.recipePath, stringify(recipe));
    if (!request.resume) await writeFile(runDir.metricsPath, "");
  }
  const submissionId = `arc-${request.runId}-${request.attempt}`;
  await jobs.submit({
    entrypoint: verl ? verl.entrypoint : arcEntrypoint(request),
    submissionId,
    runtimeEnv: {
      env_vars: { RAY_COLOR_PREFIX: "0", RAY_DEDUP_LOGS: "0", PYTHONUNBUFFERED: "1", ...request.env },
    },
    metadata: { arc_run_id: request.runId, ...request.metadata },
    ...jobEntrypointResources(recipe),
  });
  request.onLog?.(`submitted Ray job ${submissionId} to ${url}`);
  const logFile = join(runDir.dir, JOB_LOG_FILE);
  const records: StepRecord[] = [];
  const readLog = jobLogReader(jobs, submissionId, request, {
    logFile,
    runDir,
    keepsMetrics: !!verl,
    records,
  });
  const state: RunState = {
    runId: request.runId,
    status: "running",
    step: 0,
    totalSteps: recipe.trainer.steps,
    lastCheckpoint: null,
    startedAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
    pid: process.pid,
  };
  const details = await followJob(jobs, submissionId, request, { state, records, readLog });
  state.status = RUN_STATUS[details.status];
  state.step = records.at(-1)?.step ?? 0;
  const checkpoint = verl
    ? await importedVerlCheckpoint(jobs, submissionId, request, details, verl.checkpointDir, runDir)
    : await arcTrainerCheckpoint(runDir, details, state);
  if (state.status === "failed") {
    const tail = (await readFile(logFile, "utf8").catch(() => "")).trim().split("\n").slice(-5).join(" | ");
    state.error = `Ray job ${submissionId} failed: ${details.message ?? details.error_type ?? "no message"}${tail ? ` | ${tail}` : ""}`;
  }
  const recipeText = existsSync(runDir.recipePath) ? await readFile(runDir.recipePath) : Buffer.from("");
  return {
    state,
    records,
    checkpoint,
    recipeHash: `sha256:${createHash("sha256").update(recipeText).digest("hex")}`,
  };
}

/**
 * Reads a job's log written since the last read: keeps it in `logFile`, passes its whole lines to `onLog`, adds the
 * step records past the last one to `records` (and, for a VERL job, to the run's metrics file) and returns them.
 */
function jobLogReader(
  jobs: RayJobsClient,
  submissionId: string,
  request: RayJobRunRequest,
  into: { logFile: string; runDir: RunDir; keepsMetrics: boolean; records: StepRecord[] },
): () => Promise<StepRecord[]> {
  const { records } = into;
  let logged = 0;
  let partial = "";
  return async () => {
    const log = await jobs.logs(submissionId);
    if (log.length <= logged) return [];
    const fresh = log.slice(logged);
    logged = log.length;
    await appendFile(into.logFile, fresh);
    const lines = (partial + fresh).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) if (line.trim()) request.onLog?.(line.trim());
    const parsed = stepRecordsInLog(lines, request.recipe.trainer.backend).filter(
      (r) => r.step > (records.at(-1)?.step ?? -1),
    );
    records.push(...parsed);
    // Arc's trainer keeps the run's metrics file itself; a VERL job's records are kept here
    for (const record of into.keepsMetrics ? parsed : []) await into.runDir.appendMetrics(record);
    return parsed;
  };
}

/**
 * Polls the job to its end, handing each read of its log to `onPoll` with the run's state, and stops the job (once)
 * when `onPoll` says so; a last read after its end. Returns the job's final details.
 */
async function followJob(
  jobs: RayJobsClient,
  submissionId: string,
  request: RayJobRunRequest,
  run: { state: RunState; records: StepRecord[]; readLog: () => Promise<StepRecord[]> },
): Promise<RayJobDetails> {
  const { state, records, readLog } = run;
  let stopping = false;
  let details = await jobs.job(submissionId);
  while (!TERMINAL_JOB_STATUSES.includes(details.status)) {
    await new Promise((resolve) => setTimeout(resolve, request.pollMs));
    details = await jobs.job(submissionId);
    const fresh = await readLog();
    state.step = records.at(-1)?.step ?? 0;
    state.updatedAt = new Date().toISOString();
    if ((await request.onPoll(fresh, state)) === "stop" && !stopping) {
      stopping = true;
      await jobs.stop(submissionId);
      request.onLog?.(`stopping Ray job ${submissionId}`);
    }
  }
  await request.onPoll(await readLog(), state);
  return details;
}

/** A VERL job's last `global_step_N/actor`, imported into `<run>/final` in Hugging Face's layout; null unless it succeeded. */
async function importedVerlCheckpoint(
  jobs: RayJobsClient,
  submissionId: string,
  request: RayJobRunRequest,
  details: RayJobDetails,
  checkpointDir: string,
  runDir: RunDir,
): Promise<string | null> {
  if (details.status !== "SUCCEEDED") return null;
  const { recipe } = request;
  return importVerlCheckpoint({
    checkpointDir,
    recipe,
    out: join(runDir.dir, "final"),
    mergeAdapter: (actorDir: string, target: string) =>
      runVerlMerger(jobs, `${submissionId}-merge`, recipe, actorDir, target, request.pollMs),
  });
}

/**
 * The last checkpoint of Arc's trainer, from the state it wrote in the run's folder (a shared runs folder), which also
 * settles `state`'s status and last checkpoint; null (and `state` as the job left it) when it wrote none here.
 */
async function arcTrainerCheckpoint(
  runDir: RunDir,
  details: RayJobDetails,
  state: RunState,
): Promise<string | null> {
  if (!existsSync(runDir.statePath)) return null;
  const written = await runDir.readState();
  // a trainer killed before it wrote its end (Ray's SIGKILL a few seconds after a stop) left "running"
  const ended: RunState["status"] = details.status === "STOPPED" ? "cancelled" : "failed";
  state.status = written.status === "running" ? ended : written.status;
  state.lastCheckpoint = written.lastCheckpoint;
  return written.lastCheckpoint ? join(runDir.dir, written.lastCheckpoint) : null;
}

/** Runs VERL's model merger as a job on the same cluster (`python -m verl.model_merger merge`), to its end. */
async function runVerlMerger(
  jobs: RayJobsClient,
  submissionId: string,
  recipe: Recipe,
  actorDir: string,
  target: string,
  pollMs: number,
): Promise<void> {
  const entrypoint = [
    "exec",
    shellWord(recipe.verl.python),
    "-m verl.model_merger merge --backend fsdp",
    `--local_dir ${shellWord(actorDir)}`,
    `--target_dir ${shellWord(target)}`,
  ].join(" ");
  await jobs.submit({ entrypoint, submissionId, metadata: { arc_step: "merge" } });
  let details = await jobs.job(submissionId);
  while (!TERMINAL_JOB_STATUSES.includes(details.status)) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    details = await jobs.job(submissionId);
  }
  if (details.status !== "SUCCEEDED")
    throw new Error(
      `VERL's model merger (Ray job ${submissionId}) ended ${details.status}: ${details.message}`,
    );
}
