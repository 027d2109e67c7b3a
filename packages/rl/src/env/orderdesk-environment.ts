import type { Environment, Observation, OrderdeskSolution, Task } from "@arc/core";
import {
  InvalidInputError,
  ORDERDESK_MAX_TURNS,
  OrderdeskSession,
  orderdeskFamily,
  verifyOrderdesk,
} from "@arc/core";

/**
 * The order desk as a gymnasium-like environment. Each `step` runs one model output (a tool call) against the
 * desk: `lookup_order` answers with the order as a tool message and the episode goes on; an action ends it.
 * The reward is 0 until the end, then the verifier's final-state reward, so training and production judge alike.
 */
export class OrderdeskEnvironment implements Environment {
  private session: OrderdeskSession | undefined;
  private messages: Observation["messages"] = [];
  private outputs: string[] = [];

  constructor(private readonly maxTurns = ORDERDESK_MAX_TURNS) {}

  /** Starts an episode on the task's order (the seed is unused: the desk is deterministic). */
  async reset(task: Task, _seed: number): Promise<Observation> {
    const solution = task.solution as OrderdeskSolution | undefined;
    if (task.env !== "orderdesk" || !solution?.order) {
      throw new InvalidInputError(
        `task: expected an orderdesk task with solution.order, got env ${JSON.stringify(task.env)}`,
        {
          field: "task.solution",
        },
      );
    }
    this.session = new OrderdeskSession(solution, this.maxTurns);
    this.messages = orderdeskFamily.prompt(task);
    this.outputs = [];
    return { messages: [...this.messages] };
  }

  /** Runs one tool call; `info.outcome` says how it was taken, `info.verdict` the verifier's judgement at the end. */
  async step(action: string) {
    const session = this.session;
    if (!session || session.done)
      throw new Error("step() without a running episode: call reset(task, seed) first");
    const result = session.act(action);
    this.outputs.push(action);
    this.messages.push({ role: "assistant", content: action }, { role: "tool", content: result.observation });
    const info: Record<string, unknown> = { outcome: result.outcome, turn: this.outputs.length - 1 };
    let reward = 0;
    if (result.done) {
      const verdict = verifyOrderdesk({ outputs: this.outputs, solution: session.solution });
      info.verdict = verdict;
      reward = verdict.reward;
    }
    return { observation: { messages: [...this.messages] }, reward, done: result.done, info };
  }
}
