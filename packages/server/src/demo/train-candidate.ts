import { join } from "node:path";
import type { RunState, StepRecord } from "@arc/rl";
import { REPOSITORY_ROOT, trainInChildProcess } from "../orchestrator/train-process.ts";

/** Where the shipped recipes and models are: the repository root, or the installed package's folder. */
export const REPO_ROOT = REPOSITORY_ROOT;

/** A training run of `arc train` in a child process, so the server and the agent keep the other core. */
export interface TrainRequest {
  /** The recipe, relative to the repository root (e.g. `recipes/<env>-dpo.yaml`). */
  recipe: string;
  runsDir: string;
  runId: string;
  /** `key=value` overrides of the recipe. */
  overrides: string[];
  /**
   * Stop (clean checkpoint, status cancelled) at this time, if the run has not ended by then; a run is never stopped
   * before its first step, so a deadline that comes too soon still leaves a one-step checkpoint.
   */
  deadline: number;
  /** Every new step record, as the run writes it. */
  onStep(record: StepRecord, state: RunState | null): void;
  /** Stops the run early (after its first step) when it returns true for a new step record. */
  stopAfter?: (record: StepRecord) => boolean;
  /** The run's stderr lines (its own progress and errors), for the log. */
  onLog?: (line: string) => void;
}

/** How a training run ended. */
export interface TrainOutcome {
  runId: string;
  dir: string;
  state: RunState;
  records: StepRecord[];
  /** The last checkpoint (HF layout), absolute; null when the run wrote none. */
  checkpoint: string | null;
  /** sha256 of the resolved recipe the run wrote. */
  recipeHash: string;
  /** True when the deadline stopped it before its last step. */
  stoppedAtDeadline: boolean;
  /** True when `stopAfter` stopped it before its last step. */
  stoppedEarly: boolean;
}

/** Runs `arc train <recipe> <overrides>` through the orchestrator's child process, reports each step, and stops it. */
export async function trainCandidate(request: TrainRequest): Promise<TrainOutcome> {
  let stepped = false;
  let stoppedAtDeadline = false;
  let stoppedEarly = false;
  const outcome = await trainInChildProcess({
    runsDir: request.runsDir,
    runId: request.runId,
    recipePath: join(REPO_ROOT, request.recipe),
    overrides: request.overrides,
    resume: false,
    pollMs: 1000,
    onPoll: async (records, state) => {
      for (const record of records) {
        request.onStep(record, state);
        stepped ||= record.step > 0;
        if (stepped && !stoppedAtDeadline && request.stopAfter?.(record)) stoppedEarly = true;
      }
      // a run cancelled before its first step writes no checkpoint, so a phase whose budget was spent before it
      // began (a slow or busy machine) is stopped only once it has a step to hand on
      if (stepped && !stoppedEarly && Date.now() >= request.deadline) stoppedAtDeadline = true;
      return stoppedEarly || stoppedAtDeadline ? "stop" : "continue";
    },
    onLog: request.onLog,
  });
  const cancelled = outcome.state.status === "cancelled";
  return {
    runId: request.runId,
    dir: join(request.runsDir, request.runId),
    state: outcome.state,
    records: outcome.records,
    checkpoint: outcome.checkpoint,
    recipeHash: outcome.recipeHash,
    stoppedAtDeadline: stoppedAtDeadline && cancelled,
    stoppedEarly: stoppedEarly && cancelled,
  };
}
