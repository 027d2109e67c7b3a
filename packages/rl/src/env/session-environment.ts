import type { Environment, FamilySession, Observation, Task, TaskFamily, Verifier } from "@arc/core";
import { InvalidInputError } from "@arc/core";

/**
 * A multi-turn family's episode as a gymnasium-like environment. Each `step` runs one model output through the
 * family's session: the session answers with a tool message and the episode goes on until it says done. The
 * reward is 0 until the end, then the family verifier's reward on all the outputs, so training and production
 * judge alike. `info.verdict` carries the verifier's full result at the end.
 */
export class SessionEnvironment implements Environment {
  private session: FamilySession | undefined;
  private task: Task | undefined;
  private messages: Observation["messages"] = [];
  private outputs: string[] = [];

  constructor(
    private readonly family: TaskFamily & Required<Pick<TaskFamily, "session">>,
    private readonly verifier: Verifier,
    private readonly maxTurns?: number,
  ) {}

  /** Starts an episode on the task (the seed is unused: sessions are deterministic). */
  async reset(task: Task, _seed: number): Promise<Observation> {
    if (task.env !== this.family.env) {
      throw new InvalidInputError(
        `task.env: expected ${JSON.stringify(this.family.env)}, got ${JSON.stringify(task.env)}`,
        { field: "task.env" },
      );
    }
    this.session = this.family.session(task, this.maxTurns === undefined ? {} : { maxTurns: this.maxTurns });
    this.task = task;
    this.messages = this.family.prompt(task);
    this.outputs = [];
    return { messages: [...this.messages] };
  }

  /** Runs one model output; `info.turn` is its index, `info.verdict` the verifier's judgement at the end. */
  async step(action: string) {
    const session = this.session;
    if (!session || session.done)
      throw new Error("step() without a running episode: call reset(task, seed) first");
    const result = session.act(action);
    this.outputs.push(action);
    this.messages.push({ role: "assistant", content: action }, { role: "tool", content: result.observation });
    const info: Record<string, unknown> = { turn: this.outputs.length - 1 };
    if ("outcome" in result) info.outcome = result.outcome;
    let reward = 0;
    if (result.done) {
      const verdict = this.verifier({ outputs: this.outputs, solution: this.task?.solution });
      info.verdict = verdict;
      reward = verdict.reward;
    }
    return { observation: { messages: [...this.messages] }, reward, done: result.done, info };
  }
}
