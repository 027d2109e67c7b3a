import type { Environment, Observation, Task, TaskFamily, Verifier, VerifyResult } from "@arc/core";
import { InvalidInputError, taskPrompt } from "@arc/core";

/**
 * A one-step environment: `reset` shows the family's prompt; `step` takes the model's one answer, verifies it
 * and ends the episode with the verifier's reward. `info.verdict` carries the verifier's full result.
 */
export class SingleTurnEnvironment implements Environment {
  private task: Task | undefined;

  constructor(
    private readonly family: TaskFamily,
    private readonly verifier: Verifier,
  ) {}

  /**
   * Starts an episode: the task's recorded prompt and tools, else the family's prompt (the seed is unused: the
   * episode is deterministic).
   */
  async reset(task: Task, _seed: number): Promise<Observation> {
    if (task.env !== this.family.env) {
      throw new InvalidInputError(
        `task.env: expected ${JSON.stringify(this.family.env)}, got ${JSON.stringify(task.env)}`,
        {
          field: "task.env",
        },
      );
    }
    this.task = task;
    return taskPrompt(this.family, task);
  }

  /** Judges the one answer and ends the episode. */
  async step(action: string) {
    const task = this.task;
    if (!task) throw new Error("step() before reset(): call reset(task, seed) first");
    this.task = undefined;
    const verdict: VerifyResult = this.verifier({ outputs: [action], solution: task.solution });
    const prompt = taskPrompt(this.family, task);
    const messages = [...prompt.messages, { role: "assistant", content: action }];
    return {
      observation: { messages, ...(prompt.tools ? { tools: prompt.tools } : {}) },
      reward: verdict.reward,
      done: true,
      info: { verdict },
    };
  }
}
