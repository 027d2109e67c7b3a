import type { GenResult, InferenceEngine } from "../engine-api/index.ts";

/** A unit of work for a rollout: one question of a task family, with what is needed to verify it. */
export interface Task {
  id: string;
  /** The environment family, e.g. `toolcall`, `arith`, `orderdesk`. */
  env: string;
  question: string;
  /** What a verifier checks against (expected tool call, number, final state...). */
  solution: unknown;
  meta?: Record<string, unknown>;
}

/** What the agent sees: the conversation so far. */
export interface Observation {
  messages: { role: "system" | "user" | "assistant" | "tool"; content: string }[];
}

/** A gymnasium-like environment over chat turns. */
export interface Environment {
  reset(task: Task, seed: number): Promise<Observation>;
  step(
    action: string,
  ): Promise<{ observation: Observation; reward: number; done: boolean; info: Record<string, unknown> }>;
}

/** Decides the next action from an observation, using an inference engine. */
export interface Agent {
  act(engine: InferenceEngine, observation: Observation): Promise<GenResult>;
}

/** One finished episode, ready for training. */
export interface Trajectory {
  task: Task;
  /** Every model turn of the episode, in order (one for single-turn tasks). */
  turns: GenResult[];
  reward: number;
  /**
   * One reward per turn when the turns are independent samples of the same prompt (a single-turn group,
   * as GRPO and semi-online DPO need); `reward` is then their mean. Absent for multi-turn episodes.
   */
  rewards?: number[];
  /** Weight versions that produced the episode's tokens: min and max over all turns. */
  versionRange: [number, number];
  info: Record<string, unknown>;
}

/** Runs one episode. Returns `null` to reject it (e.g. it was aborted, or is useless for training). */
export interface RolloutWorkflow {
  runEpisode(engine: InferenceEngine, task: Task): Promise<Trajectory | null>;
}
