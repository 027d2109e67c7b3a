import type { Agent, Environment, InferenceEngine, RolloutWorkflow, Task, Trajectory } from "@arc/core";
import { createEnvironment } from "../env/index.ts";
import { ChatAgent } from "./chat-agent.ts";
import { type SamplingOptions, versionRange } from "./sampling.ts";

/** Options of the multi-turn agentic workflow. */
export interface MultiTurnWorkflowOptions {
  /** Passed to the engine on every turn. */
  sampling?: SamplingOptions;
  /** Hard cap on model turns; the environment may end the episode sooner (default 8). */
  maxTurns?: number;
  /** The environment of one episode; default: the built-in environment of `task.env`. */
  createEnvironment?: (task: Task) => Environment;
  /** Chooses each action; default: a ChatAgent with `sampling`. */
  agent?: Agent;
  /** Aborting cancels generation; the episode is then rejected. */
  signal?: AbortSignal;
}

/**
 * Multi-turn agentic rollout, read top to bottom: reset → (agent acts → environment steps, observation grows)
 * until the environment says done or `maxTurns` → a Trajectory with every model turn and the summed reward.
 *
 * Returns `null` (reject) when a turn was aborted. An episode cut by `maxTurns` is kept, with
 * `info.truncated = true` and the reward earned so far (0 for the order desk), since failing to finish is a lesson too.
 */
export class MultiTurnWorkflow implements RolloutWorkflow {
  constructor(private readonly options: MultiTurnWorkflowOptions = {}) {}

  async runEpisode(engine: InferenceEngine, task: Task): Promise<Trajectory | null> {
    const env = (this.options.createEnvironment ?? ((t: Task) => createEnvironment(t.env)))(task);
    const agent = this.options.agent ?? new ChatAgent(this.options.sampling, this.options.signal);
    const maxTurns = this.options.maxTurns ?? 8;
    const startVersion = engine.getVersion();

    let observation = await env.reset(task, this.options.sampling?.seed ?? 0);
    const turns = [];
    const steps: Record<string, unknown>[] = [];
    let reward = 0;
    let done = false;
    while (!done && turns.length < maxTurns) {
      const turn = await agent.act(engine, observation);
      if (turn.finishReason === "abort") return null;
      turns.push(turn);
      const step = await env.step(turn.text);
      reward += step.reward;
      steps.push(step.info);
      observation = step.observation;
      done = step.done;
    }
    return {
      task,
      turns,
      reward,
      versionRange: versionRange(turns, startVersion),
      info: { steps, truncated: !done, messages: observation.messages },
    };
  }
}
