import type { Recipe } from "../recipe/index.ts";

/** Where a run stands; `state.json` holds it. */
export type RunStatus = "running" | "completed" | "cancelled" | "failed";

/** One optimizer step as `metrics.jsonl` records it (one JSON line per step; step 0 is the starting model's evaluation). */
export interface StepRecord {
  step: number;
  algorithm: Recipe["trainer"]["algorithm"];
  /** Objective value; null when the step had nothing to train on (every group tied). */
  loss: number | null;
  /** Mean reward of the step's rollouts (null for SFT). */
  reward: number | null;
  /** Share of the step's rollout samples the verifier passed (null for SFT). */
  accuracy: number | null;
  /** GRPO: mean and std of the rows' advantages. DPO: mean reward margin of the pairs. */
  advantageMean: number | null;
  advantageStd: number | null;
  /** DPO: pairs formed (sampled + mixed), groups skipped as ties. GRPO: groups kept, groups dropped as uniform. */
  used: number;
  skipped: number;
  gradNorm: number | null;
  learningRate: number | null;
  /** Tokens generated plus tokens trained in this step. */
  tokens: number;
  tokensPerSecond: number;
  /** How many policy versions the step's rollouts lag behind the policy they train (0 = on-policy). */
  staleness: number;
  /** The policy step whose weights generated the step's rollouts. */
  generatorStep: number;
  /** Held-out evaluation after this step, when one ran. */
  evalAccuracy?: number;
  evalFailureRate?: number;
  /** Seconds that held-out evaluation took. */
  evalS?: number;
  /** Run seconds so far, training and generation only (evaluations excluded), summed over resumes. */
  elapsedS: number;
  /** Objective-specific figures from the engine (`margin`, `rewardAccuracy`, `clipFraction`, `kl`, `entropy`...). */
  extra: Record<string, number>;
}

/** `state.json`: what an orchestrator polls. */
export interface RunState {
  runId: string;
  status: RunStatus;
  /** Last completed optimizer step. */
  step: number;
  totalSteps: number;
  /** Directory of the last checkpoint, relative to the run directory; null before the first. */
  lastCheckpoint: string | null;
  startedAt: string;
  updatedAt: string;
  /** Process that runs it now (a stale pid after `kill -9` is how a crashed run is recognised). */
  pid: number;
  error?: string;
}

/** What `onCheckpoint` receives: a checkpoint directory in the HF layout, ready to register as a ModelVersion. */
export interface CheckpointInfo {
  runId: string;
  step: number;
  /** Absolute path of `checkpoints/step-N/`. */
  dir: string;
  /** The latest held-out evaluation at or before this step, if any. */
  evalFailureRate?: number;
  final: boolean;
}

/** Hooks through which a server mirrors a file-based run into its store. */
export interface RunHooks {
  onStep?: (record: StepRecord, state: RunState) => void | Promise<void>;
  onCheckpoint?: (info: CheckpointInfo) => void | Promise<void>;
}

/** What `runTraining` returns. */
export interface RunResult {
  runId: string;
  dir: string;
  status: RunStatus;
  step: number;
  lastCheckpoint: string | null;
  records: StepRecord[];
}
