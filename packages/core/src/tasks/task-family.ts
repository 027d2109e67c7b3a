import { InvalidInputError } from "../errors/index.ts";
import type { Task } from "../rollout/index.ts";
import type { Verifier, VerifyResult } from "../verify/verifier.ts";
import type { JsonSchema } from "./json-schema.ts";
import { fnv1a } from "./rng.ts";
import { SPLITS, type Split } from "./split.ts";

/** One chat message of a prompt, as the engine's chat template renders it. */
export interface ChatTurn {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
}

/** What to draw from a family: a split, a seed and how many tasks. */
export interface TaskGenerateOptions {
  split: Split;
  seed: number;
  count: number;
}

/** A tool a family's agent is offered: OpenAI's function `name`, `description` and JSON-schema `parameters`. */
export interface FamilyTool {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** One turn of a multi-turn episode: what the agent sees next, and whether the episode is over. */
export interface FamilySessionStep {
  /** The tool message the agent reads next. */
  observation: string;
  done: boolean;
  /** The tool call the turn ran, when it ran one (traced as a tool step). */
  toolCall?: { tool: string; args: Record<string, unknown> };
}

/** A multi-turn episode's world as a pure state machine: feed it the model's outputs one at a time. */
export interface FamilySession {
  readonly done: boolean;
  act(output: string): FamilySessionStep;
}

/**
 * A task family: how to prompt for a task and what a right answer is, plus what the family can do beyond that
 * (generate tasks, verify outputs, run multi-turn episodes). Built-ins and users' families register alike into
 * a `TaskFamilyRegistry`; nothing else in Arc lists families.
 */
export interface TaskFamily {
  /** The environment id the family's tasks carry (`Task.env`): lowercase letters, digits, `-` and `_`. */
  env: string;
  /** One line for listings and help. */
  description?: string;
  /** What the family exercises, as VERL's `ability` column names it (e.g. `tool_use`, `math`); default `agent`. */
  ability?: string;
  /** The tools the agent is offered (OpenAI `tools` of training prompts and exports). */
  tools?: readonly FamilyTool[];
  /** A seeded task generator; absent where tasks come only from production traces. The same options give the same tasks. */
  generate?: (options: TaskGenerateOptions) => Task[];
  /** The messages a model sees for a task (the first turn for multi-turn families). */
  prompt(task: Task): ChatTurn[];
  /** The canonical correct output of each model turn: SFT targets and a fallback `chosen` response. */
  reference(task: Task): string[];
  /** Judges an episode's outputs against the task's solution; absent for a judge-only family. */
  verify?: Verifier;
  /** A fresh episode of a multi-turn family (each output is a turn); absent for single-turn families. */
  session?: (task: Task, options?: { maxTurns?: number }) => FamilySession;
  /**
   * The claims a teaching makes about a request that the request does not support, which the teaching protocol cuts
   * before the student reads them (`ungroundedClaims` of `runTeaching`); absent where the family has no such check.
   */
  ungroundedClaims?: (question: string, teaching: string) => string[];
  /**
   * Guidance for a student whose approach is wrong, that helps without writing the answer (SFT's guided examples,
   * a teacher's labels); absent: a generic method hint.
   */
  teachingHint?: (task: Task) => string;
  /** What a teacher tells a student whose approach is right (empty when nothing); absent: nothing. */
  rightApproachHint?: (task: Task) => string;
  /**
   * The guided-student prompt (`{teaching}` and `{question}`) the family's base model is trained on; absent: the
   * teaching protocol's default.
   */
  guidedTemplate?: string;
  /**
   * The partial credit in [0, 1) of a failing output, finer than its failure class; undefined leaves it to the
   * class's credit (`partialCreditReward`).
   */
  partialCredit?: (task: Task, output: string, verdict: VerifyResult) => number | undefined;
}

/** A task id that is stable for (env, split, seed, index) and valid as a RecordId. */
export function taskId(env: string, split: string, seed: number, index: number): string {
  return `${env}-${split}-${seed >>> 0}-${index}`;
}

/** Picks a key of `weights` with probability proportional to its weight. */
export function pickWeighted<K extends string>(weights: Record<K, number>, u: number): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let left = u * total;
  for (const [k, w] of entries) {
    left -= w;
    if (left < 0) return k;
  }
  return entries[entries.length - 1][0];
}

/**
 * Whether a question falls on a split's side of the train/eval partition: `eval` owns the questions whose hash
 * is 0 mod 5, `train` the others, so the two never share a question however many are drawn; `production`
 * takes any (production traffic does repeat what was trained on).
 */
export function inSplit(split: Split, question: string): boolean {
  if (split === "production") return true;
  return (fnv1a(question) % 5 === 0) === (split === "eval");
}

/** Draws until the question falls in the split's partition. */
export function drawInSplit<T extends { question: string }>(split: Split, draw: () => T): T {
  for (let i = 0; i < 1000; i++) {
    const drawn = draw();
    if (inSplit(split, drawn.question)) return drawn;
  }
  throw new Error(`no ${split} question found in 1000 draws: the template space is too small`);
}

/** Throws an InvalidInputError naming the field when generate options are off (unknown split, bad count or seed). */
export function checkGenerateOptions(options: TaskGenerateOptions): void {
  if (!SPLITS.includes(options.split)) {
    throw new InvalidInputError(
      `split: expected one of ${SPLITS.join(", ")}, got ${JSON.stringify(options.split)}`,
      { field: "split" },
    );
  }
  if (!Number.isInteger(options.count) || options.count < 0) {
    throw new InvalidInputError(`count: expected a non-negative integer, got ${options.count}`, {
      field: "count",
    });
  }
  if (!Number.isFinite(options.seed)) {
    throw new InvalidInputError(`seed: expected a finite number, got ${options.seed}`, { field: "seed" });
  }
}
