import type { Environment, InferenceEngine, RolloutWorkflow, Task, Trajectory } from "@arc/core";
import { createEnvironment } from "../env/index.ts";
import { type SamplingOptions, versionRange } from "./sampling.ts";

/** Options of the single-turn RLVR workflow. */
export interface RlvrWorkflowOptions {
  /** Samples drawn per prompt: the group size of GRPO, the candidates of semi-online DPO (default 4). */
  n?: number;
  /** Passed to the engine with every request. */
  sampling?: SamplingOptions;
  /** The environment that rewards one sample; default: the built-in environment of `task.env`. */
  createEnvironment?: (task: Task) => Environment;
  /** Reject a group whose rewards are all equal: it has no signal for group-relative training (all right or all wrong). */
  rejectUniformRewards?: boolean;
  /** Aborting cancels generation; the episode is then rejected. */
  signal?: AbortSignal;
}

/**
 * Single-turn RLVR (reinforcement learning with verifiable rewards), read top to bottom:
 * prompt → sample n → reward each sample with the task's verifier → one Trajectory holding the group.
 *
 * Returns `null` (reject) when any sample was aborted, or when `rejectUniformRewards` is set and every
 * sample got the same reward.
 */
export class RlvrWorkflow implements RolloutWorkflow {
  private readonly n: number;

  constructor(private readonly options: RlvrWorkflowOptions = {}) {
    this.n = options.n ?? 4;
    if (!Number.isInteger(this.n) || this.n < 1)
      throw new RangeError(`n: expected an integer >= 1, got ${options.n}`);
  }

  async runEpisode(engine: InferenceEngine, task: Task): Promise<Trajectory | null> {
    const makeEnv = this.options.createEnvironment ?? ((t: Task) => createEnvironment(t.env));
    const seed = this.options.sampling?.seed ?? 0;
    const startVersion = engine.getVersion();

    // 1. prompt
    const observation = await makeEnv(task).reset(task, seed);

    // 2. sample n
    const samples = await engine.generate(
      [
        {
          id: task.id,
          messages: observation.messages,
          ...(observation.tools ? { tools: observation.tools } : {}),
          n: this.n,
          ...this.options.sampling,
        },
      ],
      { signal: this.options.signal },
    );
    if (samples.length !== this.n) {
      throw new Error(`the inference engine returned ${samples.length} samples, expected n = ${this.n}`);
    }
    if (samples.some((s) => s.finishReason === "abort")) return null;

    // 3. reward each sample in its own environment
    const rewards: number[] = [];
    const verdicts: unknown[] = [];
    for (const sample of samples) {
      const env = makeEnv(task);
      await env.reset(task, seed);
      const step = await env.step(sample.text);
      rewards.push(step.reward);
      verdicts.push(step.info.verdict);
    }
    if (this.options.rejectUniformRewards && rewards.every((r) => r === rewards[0])) return null;

    // 4. trajectory
    return {
      task,
      turns: samples,
      reward: rewards.reduce((a, b) => a + b, 0) / rewards.length,
      rewards,
      versionRange: versionRange(samples, startVersion),
      info: { verdicts },
    };
  }
}
