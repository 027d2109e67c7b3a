import { join } from "node:path";
import type { RunState, StepRecord } from "@arc/rl";
import type { DatasetInfo } from "../failures/index.ts";
import { runDataset } from "../orchestrator/build-run-datasets.ts";
import { metricsSummary } from "../orchestrator/execute-run.ts";
import {
  createRun,
  finishRun,
  type RunDataset,
  reportProgress,
  withoutServerPaths,
} from "../orchestrator/run-store.ts";
import type { Queryable } from "../store/database.ts";
import { REPO_ROOT, type TrainOutcome, type TrainRequest, trainCandidate } from "./train-candidate.ts";

/** The trigger and owner of the demo's runs in the product's run store. */
export const DEMO_TRIGGER = "demo";

/** How often a demo run heartbeats while it trains: well within the orchestrator's `staleMs` (default 60 s). */
const HEARTBEAT_MS = 10_000;

/** Where a demo training is recorded (the product's run store, for the demo's tenant) and what it trained from. */
export interface DemoRunLineage {
  db: Queryable;
  tenantId: string;
  /** The production model version it trains from. */
  baseModelId: string;
  datasets: RunDataset[];
  patterns: string[];
  sourceTraceCount: number;
}

/**
 * The lineage of a demo run for the demo's tenant: the datasets it trains on (`trainedOn`, whose traces it draws on)
 * and is judged on, and their patterns.
 */
export function demoRunLineage(
  store: { db: Queryable; tenantId: string; baseModelId: string },
  trainedOn: DatasetInfo[],
  judgedOn: DatasetInfo[] = [],
): DemoRunLineage {
  const datasets = [...trainedOn, ...judgedOn];
  return {
    ...store,
    datasets: datasets.map(runDataset),
    patterns: [...new Set(datasets.flatMap((d) => d.patternIds))],
    sourceTraceCount: new Set(trainedOn.flatMap((d) => d.sourceTraceIds)).size,
  };
}

/** A demo training recorded as a run of the product, so Runs lists it and a model's lineage link resolves. */
export class RecordedRun {
  private records: StepRecord[] = [];
  private state: RunState | null = null;
  private reporting: Promise<void> | null = null;
  private reportError: unknown = null;

  private constructor(
    private readonly lineage: DemoRunLineage,
    readonly id: string,
    private readonly runsDir: string,
  ) {}

  /** Records `request`'s run as running (trigger and owner `demo`) with its recipe, overrides and lineage. */
  static async start(lineage: DemoRunLineage, request: TrainRequest): Promise<RecordedRun> {
    const { db, tenantId } = lineage;
    await createRun(db, tenantId, {
      id: request.runId,
      trigger: DEMO_TRIGGER,
      recipePath: join(REPO_ROOT, request.recipe),
      overrides: request.overrides,
      runsDir: request.runsDir,
      baseModelId: lineage.baseModelId,
      status: "running",
      owner: DEMO_TRIGGER,
    });
    await reportProgress(db, tenantId, request.runId, DEMO_TRIGGER, {
      datasets: lineage.datasets,
      patterns: lineage.patterns,
      sourceTraceCount: lineage.sourceTraceCount,
    });
    return new RecordedRun(lineage, request.runId, request.runsDir);
  }

  /**
   * Trains `request` (`trainCandidate`), recording its steps and figures as they come and heartbeating between them
   * (a step of a large model can take longer than the orchestrator waits before taking a silent run over); a failure
   * ends the run failed.
   */
  async train(request: TrainRequest): Promise<TrainOutcome> {
    const { db, tenantId } = this.lineage;
    const heartbeat = setInterval(() => {
      reportProgress(db, tenantId, this.id, DEMO_TRIGGER, {}).catch((error: unknown) => {
        this.reportError ??= error;
      });
    }, HEARTBEAT_MS);
    try {
      const outcome = await trainCandidate({
        ...request,
        onStep: (record, state) => {
          this.records.push(record);
          this.state = state;
          this.reporting ??= this.report()
            .catch((error: unknown) => {
              this.reportError ??= error;
            })
            .finally(() => {
              this.reporting = null;
            });
          request.onStep(record, state);
        },
      });
      await this.reporting;
      if (this.reportError) throw this.reportError;
      this.records = outcome.records;
      this.state = outcome.state;
      await this.report(outcome.recipeHash);
      return outcome;
    } catch (error) {
      await this.fail(error);
      throw error;
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * Ends the run: succeeded when it completed or was stopped on purpose with a checkpoint (its time budget, its
   * target or a re-plan; the metrics say which), with the candidate its checkpoint became; otherwise as it ended.
   */
  async end(outcome: TrainOutcome, candidateId?: string): Promise<void> {
    const { db, tenantId } = this.lineage;
    const stoppedOnPurpose =
      (outcome.stoppedAtDeadline || outcome.stoppedEarly) && outcome.checkpoint !== null;
    if (stoppedOnPurpose)
      await reportProgress(db, tenantId, this.id, DEMO_TRIGGER, {
        metrics: { stoppedAtDeadline: outcome.stoppedAtDeadline, stoppedEarly: outcome.stoppedEarly },
      });
    const { status, error } = outcome.state;
    await finishRun(
      db,
      tenantId,
      this.id,
      DEMO_TRIGGER,
      status === "completed" || stoppedOnPurpose
        ? { status: "succeeded", candidateId }
        : status === "cancelled"
          ? { status: "cancelled" }
          : { status: "failed", error: error ?? `run ended ${status}` },
    );
  }

  /**
   * Registers the checkpoint the run ended with (`register`), then ends the run succeeded with it as its candidate;
   * a run with no checkpoint, or whose registration fails, ends failed.
   */
  async endWithCandidate<T extends { id: string }>(
    outcome: TrainOutcome,
    register: (checkpoint: string) => Promise<T>,
  ): Promise<T> {
    let candidate: T;
    try {
      if (!outcome.checkpoint) throw new Error(`run ${this.id} wrote no checkpoint`);
      candidate = await register(outcome.checkpoint);
    } catch (error) {
      await this.fail(error);
      throw error;
    }
    await this.end(outcome, candidate.id);
    return candidate;
  }

  /** Ends the run failed with `error`'s message (no server path in it). */
  async fail(error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    await finishRun(this.lineage.db, this.lineage.tenantId, this.id, DEMO_TRIGGER, {
      status: "failed",
      error: withoutServerPaths(message, this.runsDir),
    });
  }

  /** Records the latest step, total and figures (and the resolved recipe's hash, once known). */
  private async report(recipeHash?: string): Promise<void> {
    await reportProgress(this.lineage.db, this.lineage.tenantId, this.id, DEMO_TRIGGER, {
      step: this.state?.step ?? this.records.at(-1)?.step,
      totalSteps: this.state?.totalSteps,
      metrics: metricsSummary(this.records),
      recipeHash,
    });
  }
}

/** Trains `request` as a recorded run that ends with the training (a run whose checkpoint becomes no candidate). */
export async function trainAsRun(lineage: DemoRunLineage, request: TrainRequest): Promise<TrainOutcome> {
  const run = await RecordedRun.start(lineage, request);
  const outcome = await run.train(request);
  await run.end(outcome);
  return outcome;
}
