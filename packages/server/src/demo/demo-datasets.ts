import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DetectorRegistry, Task } from "@arc/core";
import {
  currentFailureMembers,
  exportDataset,
  getDataset,
  listPatterns,
  pendingDetections,
  synthesizeDataset,
  verdictCounts,
} from "../failures/index.ts";
import type { Database, Queryable } from "../store/database.ts";
import { getTraces } from "../store/trace-store.ts";
import { DEMO_FAMILY } from "./demo-family.ts";
import type { DemoOptions } from "./demo-options.ts";
import { type DemoProgress, sleep } from "./demo-progress.ts";

/**
 * The EvalSet's failed items per pattern and passed items of its general slice. Only items the production model
 * passes can regress, so these set how noisy the NDR gate is: with 3 and 20 (~49 items, ~20 passed) two regressions
 * put a candidate one short of failing NDR 0.95, and a candidate that breaks 5% of what passed fails there ~8% of
 * the time; at these sizes (about twice the items) ~2%. Eval questions are held out of the training pools.
 */
const EVAL_PER_PATTERN = 6;
const EVAL_GENERAL_SIZE = 40;
/**
 * Rows of the warm-up pool at most. The pool is the baseline traffic as it came, each prompt once: failed prompts
 * (trained on their reference answers) in the share the traffic failed, and passed ones, so that nothing that worked
 * is lost. Each prompt once does at least as well as oversampling the failures (0.096 against 0.113 on 512
 * held-out production tasks, base 0.221).
 */
const WARMUP_POOL_MAX = 3072;

type Synthesized = Awaited<ReturnType<typeof synthesizeDataset>>["dataset"];
type Pattern = Awaited<ReturnType<typeof listPatterns>>[number];

/** What the failures became: the patterns, the EvalSet and the training datasets, with the files `arc train` reads. */
export interface DemoDatasets {
  patterns: Pattern[];
  evalSet: Synthesized;
  pool: Synthesized;
  poolPath: string;
  /** Production preference pairs for DPO; null when the warm-up trains on the same corrections. */
  preferences: Synthesized | null;
  prefPath: string | null;
  /** The SFT warm-up's pool; null when the demo runs no warm-up. */
  warmupPool: Synthesized | null;
  warmupPoolPath: string | null;
  /** Every dataset the candidate trained on. */
  trainedOn: Synthesized[];
}

/**
 * Chosen answers for the failed traces: the simulated agent's teacher is the task's reference answer, verified by
 * the verifier on the server like any teacher output.
 */
async function teacherCandidates(
  db: Queryable,
  tenantId: string,
  tasks: readonly Task[],
): Promise<Record<string, { text: string; source: "teacher" }[]>> {
  const members = await currentFailureMembers(db, tenantId, "all", 1000);
  const traces = await getTraces(
    db,
    tenantId,
    members.map((m) => m.traceId),
  );
  const byQuestion = new Map(tasks.map((t) => [t.question.trim().toLowerCase(), t]));
  const candidates: Record<string, { text: string; source: "teacher" }[]> = {};
  for (const trace of traces.values()) {
    const task = byQuestion.get(
      String(trace.input ?? "")
        .trim()
        .toLowerCase(),
    );
    if (task) candidates[trace.id] = [{ text: DEMO_FAMILY.reference(task)[0], source: "teacher" }];
  }
  return candidates;
}

/**
 * The baseline traffic's verdict counts and failure patterns, once detection has judged it (waiting up to 20 s for the
 * queue to empty and a pattern to appear), said on `progress`; throws when no pattern appeared.
 */
async function judgedBaseline(db: Database, tenantId: string, progress: DemoProgress) {
  for (let i = 0; i < 80; i++) {
    if ((await pendingDetections(db, tenantId)) === 0 && (await listPatterns(db, tenantId)).length > 0) break;
    await sleep(250);
  }
  const patterns = await listPatterns(db, tenantId);
  const counts = await verdictCounts(db, tenantId);
  progress.say(
    `  verdicts: ${JSON.stringify(counts)}; patterns: ${patterns
      .slice(0, 6)
      .map((p) => `${p.label} (${p.count})`)
      .join("; ")}`,
  );
  if (patterns.length === 0) throw new Error("no failure pattern appeared: nothing to learn from");
  return { patterns, counts };
}

/** Phase 3: waits for the verdicts and patterns of the baseline traffic, then synthesizes and exports the datasets. */
export async function synthesizeDemoDatasets(context: {
  db: Database;
  tenantId: string;
  tasks: Task[];
  setupRegistry: (registry: DetectorRegistry) => void;
  options: DemoOptions;
  home: string;
  progress: DemoProgress;
}): Promise<DemoDatasets> {
  const { db, tenantId, options, progress } = context;
  const { patterns, counts } = await judgedBaseline(db, tenantId, progress);
  const synth = async (request: Parameters<typeof synthesizeDataset>[2]) =>
    (
      await synthesizeDataset(db, tenantId, request, {
        createdBy: "demo",
        setupRegistry: context.setupRegistry,
      })
    ).dataset;
  const evalSet = await synth({
    kind: "eval",
    fromPatterns: "all",
    seed: options.seed,
    size: 256,
    failureSamplingRatio: 0.8,
    failureSampling: "balanced",
    perPattern: EVAL_PER_PATTERN,
    generalSize: EVAL_GENERAL_SIZE,
    nearDuplicateThreshold: 0.8,
    maxTracesPerPattern: 1000,
    candidates: {},
  });
  /** The training datasets' request; the PreferenceSet adds the teacher's candidates. */
  const trainingRequest = {
    fromPatterns: "all",
    seed: options.seed,
    size: 256,
    failureSamplingRatio: 0.8,
    failureSampling: "balanced",
    perPattern: 20,
    generalSize: 50,
    nearDuplicateThreshold: 0.8,
    maxTracesPerPattern: 1000,
  } as const;
  const pool = await synth({ ...trainingRequest, kind: "prompts", candidates: {} });
  const dataDir = join(context.home, "datasets");
  mkdirSync(dataDir, { recursive: true });
  /** Writes a dataset where `arc train` reads it; returns the path. */
  const exportFile = async (dataset: { id: string }, format: "jsonl" | "preferences") => {
    const path = join(dataDir, `${dataset.id}.jsonl`);
    writeFileSync(path, exportDataset(await getDataset(db, tenantId, dataset.id), format).body);
    return path;
  };
  const poolPath = await exportFile(pool, "jsonl");
  // production preference pairs for DPO to mix in, unless the warm-up trains on the same corrections: after it,
  // the pairs undid its gain (see DPO_AFTER_WARMUP)
  const preferences =
    options.sftSteps > 0
      ? null
      : await synth({
          ...trainingRequest,
          kind: "preferences",
          candidates: await teacherCandidates(db, tenantId, context.tasks),
        });
  const prefPath = preferences ? await exportFile(preferences, "preferences") : null;
  // the SFT warm-up's pool: the baseline traffic, each prompt once, failed and passed in the share they came in
  const judged = (counts.failed ?? 0) + (counts.passed ?? 0);
  const warmupPool =
    options.sftSteps > 0 && judged > 0
      ? await synth({
          ...trainingRequest,
          kind: "prompts",
          size: Math.min(WARMUP_POOL_MAX, judged),
          failureSamplingRatio: (counts.failed ?? 0) / judged,
          failureSampling: "proportional",
          candidates: {},
        })
      : null;
  const warmupPoolPath = warmupPool ? await exportFile(warmupPool, "jsonl") : null;
  progress.endPhase(
    "failures → datasets",
    `${patterns.length} patterns; EvalSet ${evalSet.id} (${evalSet.rowCount} rows), PromptPool ${pool.id} (${pool.rowCount})${preferences ? `, PreferenceSet ${preferences.id} (${preferences.rowCount}, chosen = teacher answers verified by the verifier)` : ""}${warmupPool ? `, warm-up PromptPool ${warmupPool.id} (${warmupPool.rowCount}: failed prompts and passed traffic, trained on their reference answers)` : ""}`,
  );
  return {
    patterns,
    evalSet,
    pool,
    poolPath,
    preferences,
    prefPath,
    warmupPool,
    warmupPoolPath,
    trainedOn: [pool, ...(preferences ? [preferences] : []), ...(warmupPool ? [warmupPool] : [])],
  };
}
