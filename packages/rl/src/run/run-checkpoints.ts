import { cp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { TrainEngine } from "@arc/core";
import type { RolloutSource } from "../rollout/rollout-source.ts";
import type { EngineFactory } from "./engine-factory.ts";
import type { GeneratorStart } from "./rollout-sources.ts";
import type { RunDir } from "./run-dir.ts";
import type { RunHooks, RunState } from "./run-types.ts";

/** Per-run state a checkpoint carries beyond the train engine's own (`run_state.json`). */
export interface CheckpointRunState {
  step: number;
  generatorStep: number;
  /** `base`: the starting model; `policy`: this checkpoint; `generator`: the `generator/` folder beside it. */
  generator: "base" | "policy" | "generator";
  elapsedS: number;
}

/** The run state of a run's checkpoint `rel` (relative to the run's folder). */
export async function readCheckpointState(dir: RunDir, rel: string): Promise<CheckpointRunState> {
  return JSON.parse(await readFile(join(dir.dir, rel, "run_state.json"), "utf8"));
}

/** The generator a run starts sampling with: the starting model, or what its checkpoint holds. */
export function generatorAtStart(
  checkpoint: CheckpointRunState | null,
  checkpointDir: string | null,
  modelDir: string,
): GeneratorStart {
  if (!checkpoint || !checkpointDir || checkpoint.generator === "base") return { dir: modelDir, step: 0 };
  if (checkpoint.generator === "policy") return { dir: checkpointDir, step: checkpoint.generatorStep };
  const dir = join(checkpointDir, "generator");
  return { dir, step: checkpoint.generatorStep, weights: { kind: "checkpoint", dir } };
}

/** What writing a run's checkpoints takes. */
export interface CheckpointWriterOptions {
  dir: RunDir;
  /** The run's state, whose `lastCheckpoint` each checkpoint moves on. */
  state: RunState;
  train: TrainEngine;
  factory: EngineFactory;
  /** The run's rollout source, when it samples: its generator's weights are saved when they are not the policy's. */
  rollouts: () => RolloutSource | undefined;
  /** The latest held-out failure rate, which `onCheckpoint` receives. */
  evalFailureRate: () => number | undefined;
  hooks?: RunHooks;
}

/**
 * Writes `checkpoints/step-N/`: the train engine's state, the generator's weights in `generator/` when they are
 * neither the starting model nor the policy, and `run_state.json`; then points `state.json` at it.
 */
export function checkpointWriter(
  options: CheckpointWriterOptions,
): (step: number, final: boolean, elapsedS: number) => Promise<void> {
  const { dir, state, train, factory, hooks } = options;
  return async (step, final, elapsedS) => {
    const rel = dir.checkpoint(step);
    const abs = join(dir.dir, rel);
    await rm(abs, { recursive: true, force: true });
    await train.save(abs);
    const source = options.rollouts();
    const generatorStep = source?.generatorStep() ?? step;
    const generator: CheckpointRunState["generator"] =
      generatorStep === 0 ? "base" : generatorStep === step ? "policy" : "generator";
    if (generator === "generator") {
      const weights = source?.generatorWeights();
      if (!weights)
        throw new Error(`checkpoint ${step}: the generator's weights (step ${generatorStep}) are not held`);
      if (weights.kind === "checkpoint") await cp(weights.dir, join(abs, "generator"), { recursive: true });
      else await factory.saveWeights(join(abs, "generator"), weights, abs);
    }
    const runState: CheckpointRunState = { step, generatorStep, generator, elapsedS };
    await writeFile(join(abs, "run_state.json"), `${JSON.stringify(runState, null, 2)}\n`);
    state.lastCheckpoint = rel;
    state.updatedAt = new Date().toISOString();
    await dir.writeState(state);
    const evalFailureRate = options.evalFailureRate();
    await hooks?.onCheckpoint?.({ runId: state.runId, step, dir: abs, evalFailureRate, final });
  };
}
