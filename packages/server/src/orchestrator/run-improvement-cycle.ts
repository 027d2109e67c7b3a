import { hostname } from "node:os";
import type { ChosenCandidate } from "@arc/core";
import type { StepRecord } from "@arc/rl";
import type { RegistrySetup } from "../failures/index.ts";
import type { Database } from "../store/database.ts";
import { DEFAULT_RECIPE_FILE } from "./default-recipe.ts";
import { type ExecuteRunResult, executeRun, productionModel, recipeFile } from "./execute-run.ts";
import { createRun, type RunRecord, tenantRunsDir } from "./run-store.ts";

/** One improvement cycle, as a caller (the demo, a script) asks for it. */
export interface ImprovementCycleOptions {
  /** The artifacts folder, e.g. `<ARC_HOME>/artifacts`: the run's files go to `<artifactsDir>/<tenantId>/runs/<runId>/`. */
  artifactsDir: string;
  /** Recipe file, absolute or relative to the repository root (default DEFAULT_RECIPE_FILE). */
  recipe?: string;
  /** `key=value` recipe overrides after the cycle's own (`model.path`, `data.prompts`, `data.preferences`). */
  overrides?: string[];
  /**
   * Recorded as the run's trigger and the candidate's actor (default `cycle`); `api` (TENANT_TRIGGER) would mark the
   * overrides as a tenant's, to be checked against TUNABLE_RECIPE_KEYS.
   */
  trigger?: string;
  runId?: string;
  /** Pool rows, and cap of the eval and preference sets (default 256). */
  datasetSize?: number;
  /** The tenant's verifiers and solution resolver, as the failure service gets them. */
  setupRegistry?: RegistrySetup;
  /** Chosen answers by trace id for preference pairs (e.g. teacher answers); feedback corrections are added anyway. */
  preferenceCandidates?: Record<string, ChosenCandidate[]>;
  /** Aborting stops training after the current step; the run ends `cancelled` and no candidate is registered. */
  signal?: AbortSignal;
  /**
   * Epoch ms at which training stops after its current step and the checkpoint written then is registered anyway
   * (a time-boxed run); `result.candidate.metrics.stoppedAtDeadline` says whether it did.
   */
  deadline?: number;
  /** How often the run's progress is read (default 1000 ms). */
  pollMs?: number;
  /** Every poll that saw new steps: the run's row (step, metrics) and the new step records. */
  onProgress?: (run: RunRecord, fresh: StepRecord[]) => void;
  /** The training process's stderr lines. */
  onLog?: (line: string) => void;
}

/**
 * Failures → datasets → training → candidate, once, now, in the caller's process: builds an EvalSet, a PromptPool
 * and (with chosen answers) a PreferenceSet from all of the tenant's patterns, trains the recipe from the tenant's
 * production (promoted) model in an `arc train` child process, and registers the final checkpoint as a `candidate`
 * with lineage (base model, datasets, recipe and hash, run, metrics, patterns, trace count). The run is a row of
 * the runs table like the orchestrator's (visible in `arc runs`); the validator and deployer take the candidate on.
 * Resolves when the run ended; `result.run.status` says how (`failed` carries `error`).
 */
export async function runImprovementCycle(
  db: Database,
  tenantId: string,
  options: ImprovementCycleOptions,
): Promise<ExecuteRunResult> {
  const recipe = options.recipe ?? DEFAULT_RECIPE_FILE;
  recipeFile(recipe);
  const base = await productionModel(db, tenantId);
  const owner = `${hostname()}:${process.pid}:cycle`;
  const run = await createRun(db, tenantId, {
    id: options.runId,
    trigger: options.trigger ?? "cycle",
    recipePath: recipe,
    overrides: options.overrides,
    runsDir: tenantRunsDir(options.artifactsDir, tenantId),
    baseModelId: base.id,
    status: "running",
    owner,
  });
  return executeRun(db, run, {
    owner,
    pollMs: options.pollMs ?? 1000,
    datasetSize: options.datasetSize ?? 256,
    setupRegistry: options.setupRegistry,
    preferenceCandidates: options.preferenceCandidates,
    signal: options.signal,
    onAbort: "cancel",
    deadline: options.deadline,
    onProgress: options.onProgress,
    onLog: options.onLog,
  });
}
