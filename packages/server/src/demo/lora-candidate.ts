import { join } from "node:path";
import type { WarmUpReport } from "@arc/rl";
import { overridesForAlgorithm } from "@arc/rl";
import type { Queryable } from "../store/database.ts";
import type { DemoDatasets } from "./demo-datasets.ts";
import { demoModelName } from "./demo-family.ts";
import type { DemoOptions } from "./demo-options.ts";
import { LORA_SFT_RECIPE, TRAIN_THREADS } from "./demo-plan.ts";
import type { DemoProgress } from "./demo-progress.ts";
import { type DemoRunLineage, RecordedRun } from "./demo-runs.ts";
import { registerDemoCandidate } from "./register-candidate.ts";
import type { TrainRequest } from "./train-candidate.ts";
import type { DpoCandidate } from "./train-dpo.ts";

/**
 * The LoRA run's overrides: the baseline traffic's prompts (the warm-up pool, else the prompt pool), `sftSteps` steps
 * at most with one checkpoint at its end (a deadline stop writes one too), no held-out judgement in the run (the
 * validator judges the candidate), then the demo's extra overrides.
 */
export function loraOverrides(options: DemoOptions, baseModel: string, datasets: DemoDatasets): string[] {
  const steps = Math.max(1, options.sftSteps);
  return [
    `model.path=${baseModel}`,
    `data.prompts=${datasets.warmupPoolPath ?? datasets.poolPath}`,
    `data.seed=${options.seed}`,
    "data.evalCount=0",
    `trainer.steps=${steps}`,
    `trainer.checkpointEvery=${steps}`,
    `trainer.evalEvery=${steps}`,
    `trainer.trainThreads=${TRAIN_THREADS}`,
    ...overridesForAlgorithm("sft", options.extraOverrides ?? []),
  ];
}

/**
 * Phase 4 on an imported base: SFT with LoRA adapters on the torch engine (`LORA_SFT_RECIPE`) until `sftSteps` or
 * the deadline, whichever comes first; the run's last checkpoint (merged weights, with the adapter in PEFT's layout
 * beside them) is registered as the candidate. Returns it with the run's report, as the warm-up's.
 */
export async function trainLoraCandidate(context: {
  db: Queryable;
  tenantId: string;
  options: DemoOptions;
  home: string;
  baseModel: string;
  datasets: DemoDatasets;
  baseId: string;
  deadline: number;
  progress: DemoProgress;
  /** Adds the traffic's state to a progress line. */
  trafficSuffix: () => string;
  /** Where the run is recorded, and what it trains on. */
  runs: DemoRunLineage;
}): Promise<{ candidate: DpoCandidate; report: WarmUpReport }> {
  const { options, datasets, progress } = context;
  const runId = `demo-lora-${options.seed}-${Date.now().toString(36)}`;
  const started = Date.now();
  const request: TrainRequest = {
    recipe: LORA_SFT_RECIPE,
    runsDir: join(context.home, "runs"),
    runId,
    overrides: loraOverrides(options, context.baseModel, datasets),
    deadline: context.deadline,
    onStep: (r, state) => {
      const left = Math.max(0, (context.deadline - Date.now()) / 1000);
      progress.live.update(
        `train LoRA [${progress.elapsed().toFixed(0)} s] step ${r.step}/${state?.totalSteps ?? "?"} loss ${r.loss?.toFixed(3) ?? "–"} ${r.tokensPerSecond?.toFixed(0) ?? "–"} tokens/s, ${left.toFixed(0)} s left${context.trafficSuffix()}`,
      );
    },
  };
  const run = await RecordedRun.start(context.runs, request);
  const training = await run.train(request);
  const steps = training.records.filter((r) => r.step > 0);
  const trainSeconds = steps.at(-1)?.elapsedS ?? 0;
  const tokens = steps.reduce((sum, r) => sum + r.tokens, 0);
  const candidate = await registerDemoCandidate(run, training, {
    ...context,
    name: demoModelName(`lora-${runId}`),
    metrics: { steps: training.state.step },
  });
  const secondsPerStep = steps.length > 0 && trainSeconds > 0 ? trainSeconds / steps.length : null;
  progress.endPhase(
    "train (LoRA SFT)",
    `run ${runId}: ${training.state.step} steps${training.stoppedAtDeadline ? " (stopped at its time budget)" : ""}${secondsPerStep === null ? "" : `, ${secondsPerStep.toFixed(1)} s a step, ${(tokens / trainSeconds).toFixed(0)} training tokens/s`}; candidate ${candidate.id}`,
  );
  if (training.stoppedAtDeadline)
    progress.notes.push(`the LoRA run was stopped at its share of the ${options.minutes}-minute budget.`);
  const report: WarmUpReport = {
    runId,
    steps: training.state.step,
    plannedSteps: Math.max(1, options.sftSteps),
    maxSteps: options.sftSteps,
    secondsPerStep,
    tokensPerSecond: trainSeconds > 0 ? tokens / trainSeconds : null,
    heldOutTarget: null,
    budgetS: (context.deadline - started) / 1000,
    targetReachedAtStep: null,
    heldOutFailureRate: null,
    heldOutUpperBound: null,
    stoppedAtDeadline: training.stoppedAtDeadline,
    replans: [],
    records: training.records,
  };
  return {
    candidate: {
      id: candidate.id,
      name: candidate.name,
      training: {
        runId,
        steps: training.state.step,
        stoppedAtDeadline: training.stoppedAtDeadline,
        records: training.records,
        pairRate: null,
      },
    },
    report,
  };
}
