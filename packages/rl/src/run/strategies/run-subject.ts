import type { InferenceEngine } from "@arc/core";
import type { GroupReward } from "../../reward/index.ts";
import type { GroupSampler } from "../../rollout/sync-rollout-source.ts";
import type { TrainingData } from "../training-data.ts";

/** A held-out evaluation's figures. */
export interface HeldOutFigures {
  evalAccuracy: number;
  evalFailureRate: number;
  /** Figures of the subject's own (a teacher's NDR, its student's accuracy alone, its teaching tokens). */
  extra: Record<string, number>;
}

/**
 * What a run trains its model to do, whatever the algorithm: answer the recipe's prompts for its reward
 * (`recipeSubject`), or teach a frozen student (`teacherSubject`). It gives the data, how samples are scored and how
 * the model is judged on the held-out tasks.
 */
export interface RunSubject {
  /** Prompts, SFT examples, preference pairs and held-out tasks. */
  data: TrainingData;
  /** Samples and scores one step's groups on the generator. */
  sample: GroupSampler;
  /** The recipe's reward, for a rollout source that scores its samples itself; a teacher's is in its sampler. */
  reward?: GroupReward;
  /** Judges the model on `engine` (at the policy's weights) on the held-out tasks. */
  evaluate(engine: InferenceEngine, signal?: AbortSignal): Promise<HeldOutFigures>;
  /** Figures every step's record carries (a judge reward's calls and tokens so far). */
  stepExtra(): Record<string, number>;
  /** Why a run that reached its last step cannot stand (its judge scored too few samples), or undefined. */
  finalShortfall(): string | undefined;
  close(): Promise<void>;
}
