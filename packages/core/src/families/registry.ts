import { InvalidInputError } from "../errors/index.ts";
import type { Task, TaskContext } from "../rollout/index.ts";
import { offeredTools } from "../tasks/offered-tools.ts";
import type { TaskFamily, TaskGenerateOptions } from "../tasks/task-family.ts";
import type { ChatMessage } from "../trace/index.ts";
import type { Verifier } from "../verify/verifier.ts";
import { checkTaskFamily } from "./define-task-family.ts";

/**
 * The task families Arc knows, by env id. The built-ins register into it like any other family; everything that
 * needs a family (recipes, datasets, exports, training, validation, the CLI) looks it up here when it needs it, so a
 * family registered at run time is found everywhere.
 */
export class TaskFamilyRegistry {
  private readonly families = new Map<string, TaskFamily>();

  /**
   * Adds a family. Registering the same object again is a no-op; another family under a taken env id throws unless
   * `replace` is set.
   */
  register(family: TaskFamily, options: { replace?: boolean; source?: string } = {}): this {
    checkTaskFamily(family, options.source ?? "family");
    const taken = this.families.get(family.env);
    if (taken && taken !== family && !options.replace) {
      throw new InvalidInputError(
        `${options.source ?? "family"}: env: ${JSON.stringify(family.env)} is already registered (pass replace to override it)`,
        { field: "env" },
      );
    }
    this.families.set(family.env, family);
    return this;
  }

  /** Removes a family; returns whether it was there. */
  unregister(env: string): boolean {
    return this.families.delete(env);
  }

  /** The family of an env id, or undefined. */
  find(env: string): TaskFamily | undefined {
    return this.families.get(env);
  }

  /** The family of an env id; throws an InvalidInputError listing the registered ids otherwise. */
  get(env: string, field = "env"): TaskFamily {
    const family = this.families.get(env);
    if (!family) {
      throw new InvalidInputError(
        `${field}: expected one of ${this.envs().join(", ")}, got ${JSON.stringify(env)}`,
        {
          field,
        },
      );
    }
    return family;
  }

  /** The registered env ids, in registration order. */
  envs(): string[] {
    return [...this.families.keys()];
  }

  /** The registered families, in registration order. */
  list(): TaskFamily[] {
    return [...this.families.values()];
  }

  /** The verifier of an env id, or undefined for an unknown or judge-only family. */
  verifier(env: string): Verifier | undefined {
    return this.families.get(env)?.verify;
  }

  /** The verifiers of every family that has one, by env id. */
  verifiers(): Record<string, Verifier> {
    return Object.fromEntries(this.list().flatMap((f) => (f.verify ? [[f.env, f.verify]] : [])));
  }
}

/** A family's prompt for a task as OpenAI chat messages (the trace and dataset message type). */
export function familyPrompt(family: TaskFamily, task: Task): ChatMessage[] {
  return family.prompt(task).map((turn) => ({ role: turn.role, content: turn.content }));
}

/**
 * The prompt the model answers for a task: the agent's recorded messages and tools when the task carries them and
 * its family is single-turn, else the family's own prompt with the family's tools (a multi-turn family's session
 * replays from that).
 */
export function taskPrompt(family: TaskFamily, task: Task): TaskContext {
  if (task.context && !family.session) return task.context;
  const tools = offeredTools(undefined, family);
  return { messages: family.prompt(task), ...(tools?.length ? { tools } : {}) };
}

/** Draws tasks from a family's generator; throws an InvalidInputError when the family has none. */
export function generateTasks(family: TaskFamily, options: TaskGenerateOptions): Task[] {
  if (!family.generate) {
    throw new InvalidInputError(
      `env ${JSON.stringify(family.env)}: the family has no task generator: its tasks come from a dataset (a JSONL PromptPool)`,
      { field: "env" },
    );
  }
  return family.generate(options);
}
