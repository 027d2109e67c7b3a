import type { GenMessage, GenResult, InferenceEngine } from "../engine-api/index.ts";

/** A unit of work for a rollout: one question of a task family, with what is needed to verify it. */
export interface Task {
  /** Stable id within its dataset or generator, for lineage and de-duplication. */
  id: string;
  /** The environment family: the env id of a registered task family. */
  env: string;
  /** The user's request as the model sees it. */
  question: string;
  /** What a verifier checks against (expected tool call, number, final state...). */
  solution: unknown;
  /** Provenance and extras (source trace ids, pattern id, split) carried into the trajectory untouched. */
  meta?: Record<string, unknown>;
  /**
   * The prompt the agent gave the model in production, where the task came from a trace that recorded it: a
   * single-turn task is then asked and trained with these messages and tools instead of the family's prompt.
   */
  context?: TaskContext;
}

/** A recorded prompt: OpenAI chat messages verbatim (system prompt, earlier turns, tool results) and the tools offered. */
export interface TaskContext {
  messages: GenMessage[];
  /** OpenAI `tools`, as the agent offered them. */
  tools?: readonly object[];
}

/** What the agent sees: the conversation so far, and the tools it may call. */
export interface Observation {
  /** The chat so far, tool results included, in the order the model should read it. */
  messages: GenMessage[];
  /** OpenAI `tools` offered at this turn, for chat templates that render them. */
  tools?: readonly object[];
}

/** A gymnasium-like environment over chat turns. */
export interface Environment {
  /** Starts an episode of `task`; the seed makes a stochastic environment reproducible. */
  reset(task: Task, seed: number): Promise<Observation>;
  /** Applies the model's reply; `done` ends the episode, `reward` is what this step earned, `info` explains it. */
  step(
    action: string,
  ): Promise<{ observation: Observation; reward: number; done: boolean; info: Record<string, unknown> }>;
}

/** Decides the next action from an observation, using an inference engine. */
export interface Agent {
  /** One model turn; the GenResult keeps the tokens, log-probs and versions training needs. */
  act(engine: InferenceEngine, observation: Observation): Promise<GenResult>;
}

/** One finished episode, ready for training. */
export interface Trajectory {
  task: Task;
  /** Every model turn of the episode, in order (one for single-turn tasks). */
  turns: GenResult[];
  /** The episode's reward (the verifier's score, or the mean of `rewards`). */
  reward: number;
  /**
   * One reward per turn when the turns are independent samples of the same prompt (a single-turn group,
   * as GRPO and semi-online DPO need); `reward` is then their mean. Absent for multi-turn episodes.
   */
  rewards?: number[];
  /** Weight versions that produced the episode's tokens: min and max over all turns. */
  versionRange: [number, number];
  /** Why the reward is what it is (verifier details, environment info), for logs and debugging. */
  info: Record<string, unknown>;
}

/** Runs one episode. Returns `null` to reject it (e.g. it was aborted, or is useless for training). */
export interface RolloutWorkflow {
  /** Plays `task` with `engine` to the end; `null` rejects the episode. */
  runEpisode(engine: InferenceEngine, task: Task): Promise<Trajectory | null>;
}
