import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunState, StepRecord } from "@arc/rl";
import { ARC_COMMAND, REPOSITORY_ROOT } from "../orchestrator/train-process.ts";

/** Where the shipped recipes and models are: the repository root, or the installed package's folder. */
export const REPO_ROOT = REPOSITORY_ROOT;

/** A training run of `arc train` in a child process, so the server and the agent keep the other core. */
export interface TrainRequest {
  /** The recipe, relative to the repository root (e.g. `recipes/toolcall-dpo.yaml`). */
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
}

function readRecords(path: string): StepRecord[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as StepRecord];
      } catch {
        return []; // the line being written
      }
    });
}

function readState(path: string): RunState | null {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as RunState;
  } catch {
    return null;
  }
}

/** Runs `arc train <recipe> <overrides>`, reports each step, and stops it at the deadline. */
export async function trainCandidate(request: TrainRequest): Promise<TrainOutcome> {
  const dir = join(request.runsDir, request.runId);
  const child = spawn(
    process.execPath,
    [
      ARC_COMMAND,
      "train",
      join(REPO_ROOT, request.recipe),
      ...request.overrides,
      "--runs-dir",
      request.runsDir,
      "--run-id",
      request.runId,
    ],
    { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
    for (const line of chunk.split(/[\r\n]+/)) if (line.trim()) request.onLog?.(line.trim());
  });
  child.stdout.resume();
  const exited = new Promise<number>((done) => child.once("exit", (code) => done(code ?? 1)));
  let seen = 0;
  let stoppedAtDeadline = false;
  const poll = () => {
    const records = readRecords(join(dir, "metrics.jsonl"));
    const state = readState(join(dir, "state.json"));
    for (; seen < records.length; seen++) request.onStep(records[seen], state);
    // stop only a run that has taken a step: a run cancelled before its first step writes no checkpoint, and a phase
    // whose budget was spent before it began (a slow or busy machine) would then have nothing to hand on
    const stepped = records.some((r) => r.step > 0);
    if (!stoppedAtDeadline && stepped && Date.now() >= request.deadline && child.exitCode === null) {
      stoppedAtDeadline = true;
      child.kill("SIGINT");
    }
  };
  const timer = setInterval(poll, 1000);
  const code = await exited;
  clearInterval(timer);
  poll();
  const state = readState(join(dir, "state.json"));
  if (!state || (code !== 0 && state.status !== "cancelled")) {
    throw new Error(`arc train exited with ${code}: ${stderr.trim().split("\n").slice(-5).join(" | ")}`);
  }
  const recipePath = join(dir, "recipe.yaml");
  return {
    runId: request.runId,
    dir,
    state,
    records: readRecords(join(dir, "metrics.jsonl")),
    checkpoint: state.lastCheckpoint ? join(dir, state.lastCheckpoint) : null,
    recipeHash: `sha256:${createHash("sha256").update(readFileSync(recipePath)).digest("hex")}`,
    stoppedAtDeadline: stoppedAtDeadline && state.status === "cancelled",
  };
}
