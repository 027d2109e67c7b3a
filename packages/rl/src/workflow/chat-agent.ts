import type { Agent, GenResult, InferenceEngine, Observation } from "@arc/core";
import type { SamplingOptions } from "./sampling.ts";

/** The plain agent: sends the conversation so far to the engine and takes one sample as its next action. */
export class ChatAgent implements Agent {
  constructor(
    private readonly sampling: SamplingOptions = {},
    private readonly signal?: AbortSignal,
  ) {}

  async act(engine: InferenceEngine, observation: Observation): Promise<GenResult> {
    const [result] = await engine.generate(
      [
        {
          messages: observation.messages,
          ...(observation.tools ? { tools: observation.tools } : {}),
          n: 1,
          ...this.sampling,
        },
      ],
      { signal: this.signal },
    );
    if (!result) throw new Error("the inference engine returned no sample for a request with n = 1");
    return result;
  }
}
