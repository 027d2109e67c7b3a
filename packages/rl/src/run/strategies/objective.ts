import type { StepMetrics, TrainEngine } from "@arc/core";
import type { SyncInterval } from "../../algo/sync-schedule.ts";
import type { Recipe } from "../../recipe/index.ts";
import type { RolloutSource } from "../../rollout/rollout-source.ts";
import type { RenderExample } from "../engine-factory.ts";
import type { StepRecord } from "../run-types.ts";
import type { TrainingData } from "../training-data.ts";

/** The trainer block of one algorithm. */
export type TrainerOf<A extends Recipe["trainer"]["algorithm"]> = Extract<
  Recipe["trainer"],
  { algorithm: A }
>;

/** A step's record as its objective makes it; the loop adds the timing. */
export type TrainedStep = Omit<StepRecord, "elapsedS" | "tokensPerSecond">;

/** One algorithm's optimizer step: what it trains on and with which loss. */
export interface Objective {
  /** Trains optimizer step `step` (1-based); undefined when the run was cancelled while the step's rollouts sampled. */
  train(step: number, signal?: AbortSignal): Promise<TrainedStep | undefined>;
}

/** How an algorithm's generator follows the policy. */
export type RolloutRequest =
  /** In the trainer's thread, taking the policy every `syncInterval` steps (then calling `onSync`). */
  | {
      mode: "sync";
      trainer: TrainerOf<"dpo" | "grpo">;
      syncInterval: SyncInterval;
      onSync?: (step: number) => Promise<void>;
    }
  /** While the trainer trains: in the generator's own process, or in a worker thread. */
  | { mode: "async"; trainer: TrainerOf<"grpo"> };

/** What an algorithm's objective is opened with. */
export interface ObjectiveContext<T extends Recipe["trainer"]> {
  recipe: Recipe;
  /** The recipe's trainer block, of this strategy's algorithm. */
  trainer: T;
  /** The policy's trainer. */
  train: TrainEngine;
  /** The run subject's prompts, examples, preference pairs and held-out tasks. */
  data: TrainingData;
  /** How SFT turns chat examples into the model's tokens. */
  renderExample: RenderExample;
  /** Opens the run's rollout source, which the loop syncs after each step and checkpoints; call it at most once. */
  openRollouts(request: RolloutRequest): Promise<RolloutSource>;
}

/** An algorithm as the training loop runs it. */
export interface AlgorithmStrategy<T extends Recipe["trainer"]> {
  /** Optimizer updates per step: the engine's learning-rate schedule counts updates, the recipe's counts steps. */
  updatesPerStep(trainer: T): number;
  /** The algorithm's objective for a run, with the rollout source it asks for opened. */
  open(context: ObjectiveContext<T>): Promise<Objective>;
}

/** What a step's record carries beside the engine's metrics (see `StepRecord`). */
export type StepFigures = Pick<
  StepRecord,
  | "reward"
  | "accuracy"
  | "advantageMean"
  | "advantageStd"
  | "used"
  | "skipped"
  | "generatorStep"
  | "staleness"
> & {
  /** Tokens generated for the step (0 for SFT), counted with the tokens trained. */
  generatedTokens: number;
};

/** A step's record from the engine's metrics (null when the step had nothing to train on) and the step's figures. */
export function trainedStep(
  step: number,
  algorithm: Recipe["trainer"]["algorithm"],
  m: StepMetrics | null,
  figures: StepFigures,
): TrainedStep {
  return {
    step,
    algorithm,
    loss: m && Number.isFinite(m.loss) ? m.loss : null,
    reward: figures.reward,
    accuracy: figures.accuracy,
    advantageMean: figures.advantageMean,
    advantageStd: figures.advantageStd,
    used: figures.used,
    skipped: figures.skipped,
    gradNorm: m?.gradNorm ?? null,
    learningRate: m?.learningRate ?? null,
    tokens: (m?.tokens ?? 0) + figures.generatedTokens,
    staleness: figures.staleness,
    generatorStep: figures.generatorStep,
    extra: m?.extra ?? {},
  };
}
