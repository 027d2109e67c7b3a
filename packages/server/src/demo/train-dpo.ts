import { join } from "node:path";
import type { Queryable } from "../store/database.ts";
import type { DemoDatasets } from "./demo-datasets.ts";
import { demoModelName, demoRecipe } from "./demo-family.ts";
import type { DemoOptions } from "./demo-options.ts";
import { TRAIN_THREADS } from "./demo-plan.ts";
import type { DemoProgress } from "./demo-progress.ts";
import type { DemoResult } from "./demo-result.ts";
import { type DemoRunLineage, RecordedRun } from "./demo-runs.ts";
import { registerDemoCandidate } from "./register-candidate.ts";
import type { TrainRequest } from "./train-candidate.ts";

const DPO_RECIPE = demoRecipe("dpo");
/**
 * The DPO run's overrides after a warm-up. With the production preference pairs (the same corrections the warm-up
 * trained on) mixed in, DPO undid the warm-up's gain in every setting tried (0.195-0.260 on 512 production tasks,
 * from 0.170-0.193); with verifier reward (pairs only between a passing and a failing sample) at 3e-5 it held it
 * (0.166). So after a warm-up the demo makes no PreferenceSet and runs the last.
 */
const DPO_AFTER_WARMUP = ["reward.kind=verifier", "trainer.learningRate=0.00003"];

/** The candidate the DPO run made, registered in the model registry. */
export interface DpoCandidate {
  id: string;
  name: string;
  training: NonNullable<DemoResult["training"]>;
}

/** The DPO run's recipe overrides: its start, its datasets, its steps and the demo's extra overrides last. */
function dpoOverrides(context: {
  options: DemoOptions;
  maxTokens: number;
  datasets: DemoDatasets;
  startFrom: string;
  warmupRunId: string | null;
}): string[] {
  const { options, datasets } = context;
  return [
    `model.path=${context.startFrom}`,
    `data.prompts=${datasets.poolPath}`,
    ...(datasets.preferences && datasets.preferences.rowCount > 0
      ? [`data.preferences=${datasets.prefPath}`, "data.preferenceMix=0.5"]
      : []),
    `data.seed=${options.seed}`,
    ...(context.warmupRunId ? DPO_AFTER_WARMUP : []),
    `trainer.steps=${options.trainSteps}`,
    `trainer.checkpointEvery=${Math.max(1, Math.min(20, options.trainSteps))}`,
    "trainer.evalEvery=10",
    `trainer.trainThreads=${TRAIN_THREADS}`,
    `trainer.maxTokens=${context.maxTokens}`,
    "data.evalCount=32",
    ...(options.extraOverrides ?? []),
  ];
}

/** Phase 4b: semi-online DPO from `startFrom` until `trainSteps` or the deadline; registers the candidate. */
export async function trainDpoCandidate(context: {
  db: Queryable;
  tenantId: string;
  options: DemoOptions;
  home: string;
  maxTokens: number;
  datasets: DemoDatasets;
  /** The checkpoint DPO starts from: the warm-up's, else the base model. */
  startFrom: string;
  baseId: string;
  /** Lineage of the warm-up it started from, when it did. */
  warmupRunId: string | null;
  deadline: number;
  progress: DemoProgress;
  /** Adds the traffic's state to a progress line. */
  trafficSuffix: () => string;
  /** Where the run is recorded, and what it trains on. */
  runs: DemoRunLineage;
}): Promise<DpoCandidate> {
  const { options, datasets, progress } = context;
  const runId = `demo-${options.seed}-${Date.now().toString(36)}`;
  const overrides = dpoOverrides(context);
  let lastReward: number | null = null;
  const started = Date.now();
  const request: TrainRequest = {
    recipe: DPO_RECIPE,
    runsDir: join(context.home, "runs"),
    runId,
    overrides,
    deadline: context.deadline,
    onStep: (r, state) => {
      lastReward = r.reward ?? lastReward;
      const perStep = r.step > 0 ? (Date.now() - started) / 1000 / r.step : 0;
      const eta = Math.max(
        0,
        Math.min((context.deadline - Date.now()) / 1000, perStep * ((state?.totalSteps ?? 0) - r.step)),
      );
      progress.live.update(
        `train [${progress.elapsed().toFixed(0)} s] step ${r.step}/${state?.totalSteps ?? "?"} loss ${r.loss?.toFixed(3) ?? "–"} reward ${lastReward?.toFixed(3) ?? "–"} pairs ${r.used} ties ${r.skipped}${r.evalFailureRate !== undefined ? ` held-out failure ${r.evalFailureRate.toFixed(2)}` : ""} ETA ${eta.toFixed(0)} s${context.trafficSuffix()}`,
      );
    },
  };
  const run = await RecordedRun.start(context.runs, request);
  const training = await run.train(request);
  const dpo = training.records.filter((r) => r.step > 0);
  const groups = dpo.reduce((s, r) => s + r.used + r.skipped, 0);
  const pairRate = groups > 0 ? dpo.reduce((s, r) => s + r.used, 0) / groups : null;
  const heldOut = training.records.filter((r) => r.evalFailureRate !== undefined);
  const candidate = await registerDemoCandidate(run, training, {
    ...context,
    name: demoModelName(`dpo-${runId}`),
    metrics: { heldOutFailureRate: heldOut.at(-1)?.evalFailureRate ?? null, steps: training.state.step },
  });
  progress.endPhase(
    "train (semi-online DPO)",
    `run ${runId}: ${training.state.step} steps${training.stoppedAtDeadline ? " (stopped at its time budget)" : ""}, pairs formed in ${pairRate === null ? "–" : (pairRate * 100).toFixed(0)}% of groups, held-out failure ${heldOut[0]?.evalFailureRate?.toFixed(2) ?? "–"} → ${heldOut.at(-1)?.evalFailureRate?.toFixed(2) ?? "–"}; candidate ${candidate.id}`,
  );
  if (pairRate !== null && pairRate < 0.5) {
    progress.notes.push(
      `DPO found a pair (one sample scored better than another) in only ${(pairRate * 100).toFixed(0)}% of its prompt groups: the model it started from rarely produces a better answer to learn from${datasets.preferences ? "; the production preference pairs (teacher answers) supplied the rest" : ""}.`,
    );
  }
  if (training.stoppedAtDeadline)
    progress.notes.push(`DPO was stopped at its share of the ${options.minutes}-minute budget.`);
  return {
    id: candidate.id,
    name: candidate.name,
    training: {
      runId,
      steps: training.state.step,
      stoppedAtDeadline: training.stoppedAtDeadline,
      records: training.records,
      pairRate,
    },
  };
}
