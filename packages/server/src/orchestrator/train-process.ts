import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { RunDir, type RunState, type StepRecord } from "@arc/rl";
import { crashMessage } from "./crash-message.ts";

/** This package's folder: packages/server in the repository, node_modules/@arc/server when installed. */
const PACKAGE_ROOT = resolve(fileURLToPath(new URL("../../", import.meta.url)));
/** Whether this is the compiled dist/ (an installed package, or a build) rather than the TypeScript source. */
const COMPILED = import.meta.url.endsWith(".js");
/**
 * Where the shipped `recipes/` and `models/` are, and where training runs start: the installed package's folder
 * (its pack copies them in), else the repository root.
 */
export const REPOSITORY_ROOT =
  COMPILED && existsSync(join(PACKAGE_ROOT, "recipes")) ? PACKAGE_ROOT : resolve(PACKAGE_ROOT, "../..");
/** The `arc` a training run is started with: this package's compiled one, or the repository's from source. */
export const ARC_COMMAND = join(COMPILED ? PACKAGE_ROOT : REPOSITORY_ROOT, "bin/arc.mjs");

/** One `arc train` in a child process: the server's event loop stays free and a crash of the run is only the run's. */
export interface TrainProcessRequest {
  runsDir: string;
  runId: string;
  /** Absolute recipe path (ignored on resume: the run's own `recipe.yaml` is used). */
  recipePath: string;
  overrides: string[];
  /** Task-family files the run registers first (`arc --family`): the tenant's families given as data. */
  familyFiles?: string[];
  /** Continue from the run's last checkpoint (`arc train --resume`) instead of starting it. */
  resume: boolean;
  pollMs: number;
  /** Called with the records written since the last call (possibly none) and the run's state, every `pollMs`. */
  onPoll(records: StepRecord[], state: RunState | null): Promise<"continue" | "stop">;
  /** The run's stderr lines (its progress and errors). */
  onLog?: (line: string) => void;
  /**
   * Aborting stops the run at once: SIGINT (it stops after its step with a checkpoint), then SIGKILL when it is still
   * running `stopWithinMs` later (default 8 s), so a server stops in bounded time whatever the run is doing.
   */
  signal?: AbortSignal;
  stopWithinMs?: number;
}

/** How a child run ended. */
export interface TrainProcessOutcome {
  state: RunState;
  records: StepRecord[];
  /** Absolute path of the last checkpoint (HF layout); null when none was written. */
  checkpoint: string | null;
  /** `sha256:<hex>` of the resolved recipe the run wrote. */
  recipeHash: string;
}

async function readState(dir: RunDir): Promise<RunState | null> {
  try {
    return await dir.readState();
  } catch {
    return null;
  }
}

/**
 * Runs `arc train` (or `arc train --resume`) as a child process and polls its run folder. `onPoll` returning
 * `stop` sends SIGINT (once the child has written its state, so its handler is in place): the run stops after its
 * current step with a checkpoint and status `cancelled`.
 * Throws with the error the run's stderr names (see `crashMessage`) when it exits without a state it could explain.
 */
export async function trainInChildProcess(request: TrainProcessRequest): Promise<TrainProcessOutcome> {
  const dir = new RunDir(join(request.runsDir, request.runId));
  const families = (request.familyFiles ?? []).flatMap((file) => ["--family", file]);
  const args = request.resume
    ? [...families, "train", "--resume", request.runId, "--runs-dir", request.runsDir]
    : [
        ...families,
        "train",
        request.recipePath,
        ...request.overrides,
        "--runs-dir",
        request.runsDir,
        "--run-id",
        request.runId,
      ];
  const env = { ...process.env };
  // the server registers the candidate itself; `arc train` must not also do it through the HTTP API
  delete env.ARC_URL;
  delete env.ARC_API_KEY;
  const child = spawn(process.execPath, [ARC_COMMAND, ...args], {
    cwd: REPOSITORY_ROOT,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-8000);
    for (const line of chunk.split(/[\r\n]+/)) if (line.trim()) request.onLog?.(line.trim());
  });
  const exited = new Promise<number>((done) => {
    child.once("exit", (code, signal) => done(code ?? (signal ? 128 : 1)));
    child.once("error", () => done(127));
  });
  let seen = 0;
  let stopping = false;
  const poll = async () => {
    const records = await dir.readMetrics();
    const fresh = records.slice(seen);
    seen = records.length;
    const state = await readState(dir);
    // SIGINT only once this child wrote its state: `arc train` handles it from then on (before, it would kill it)
    const listening = state?.pid === child.pid;
    if (
      (await request.onPoll(fresh, state)) === "stop" &&
      listening &&
      !stopping &&
      child.exitCode === null
    ) {
      stopping = true;
      child.kill("SIGINT");
    }
  };
  let killTimer: NodeJS.Timeout | undefined;
  const stopNow = () => {
    if (child.exitCode !== null) return;
    stopping = true;
    child.kill("SIGINT");
    killTimer = setTimeout(() => {
      if (child.exitCode === null) child.kill("SIGKILL");
    }, request.stopWithinMs ?? 8000);
  };
  if (request.signal?.aborted) stopNow();
  else request.signal?.addEventListener("abort", stopNow, { once: true });
  let polling = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(poll).catch(() => undefined);
  }, request.pollMs);
  const code = await exited;
  clearInterval(timer);
  clearTimeout(killTimer);
  request.signal?.removeEventListener("abort", stopNow);
  await polling;
  await poll();
  const state = await readState(dir);
  // a stop that reaches a run as it ends (its last step done, its state completed) kills it while it exits
  const stoppedAfterItsEnd = stopping && state?.status === "completed";
  if (!state || (code !== 0 && state.status !== "cancelled" && !stoppedAfterItsEnd)) {
    // a run that failed says why in its state; a process that died before saying so leaves its stderr
    if (state?.status === "failed" && state.error) throw new Error(state.error);
    const why = crashMessage(stderr);
    throw new Error(`arc train exited with ${code}${why ? `: ${why}` : ""}`);
  }
  const recipeText = existsSync(dir.recipePath) ? await readFile(dir.recipePath) : Buffer.from("");
  return {
    state,
    records: await dir.readMetrics(),
    checkpoint: state.lastCheckpoint ? join(dir.dir, state.lastCheckpoint) : null,
    recipeHash: `sha256:${createHash("sha256").update(recipeText).digest("hex")}`,
  };
}
