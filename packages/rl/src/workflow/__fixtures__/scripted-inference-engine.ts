import type { GenerateOptions, GenRequest, GenResult, InferenceEngine, WeightSource } from "@arc/core";

/** What the script answers for one sample: the text, and optionally why it ended (default `stop`). */
export type ScriptedReply = string | { text: string; finishReason?: GenResult["finishReason"] };

/**
 * Test double of an InferenceEngine (the real one lives in @arc/engine): answers each sample with what a
 * script says, as byte-level tokens stamped with the current weight version. It records every request so
 * tests can check what a workflow asked for.
 */
export class ScriptedInferenceEngine implements InferenceEngine {
  /** Every request received, in order. */
  readonly requests: GenRequest[] = [];
  private version: number;

  constructor(
    private readonly script: (request: GenRequest, sampleIndex: number) => ScriptedReply,
    options: { version?: number } = {},
  ) {
    this.version = options.version ?? 0;
  }

  /** Answers every sample of every request from the script (or with `abort` when the signal is aborted). */
  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    const encoder = new TextEncoder();
    const results: GenResult[] = [];
    for (const request of requests) {
      this.requests.push(request);
      const prompt = (request.messages ?? []).map((m) => `${m.role}: ${m.content ?? ""}\n`).join("");
      for (let sampleIndex = 0; sampleIndex < (request.n ?? 1); sampleIndex++) {
        const reply = options.signal?.aborted
          ? { text: "", finishReason: "abort" as const }
          : this.script(request, sampleIndex);
        const { text, finishReason = "stop" } = typeof reply === "string" ? { text: reply } : reply;
        const outputTokens = [...encoder.encode(text)];
        results.push({
          requestId: request.id,
          sampleIndex,
          text,
          promptTokens: request.promptTokens ?? [...encoder.encode(prompt)],
          outputTokens,
          outputLogprobs: outputTokens.map(() => -1),
          outputVersions: outputTokens.map(() => this.version),
          finishReason,
        });
      }
    }
    return results;
  }

  /** The version stamped on output tokens. */
  getVersion(): number {
    return this.version;
  }

  /** Only bumps the version: the script decides the outputs. */
  async setWeights(version: number, _weights: WeightSource): Promise<void> {
    this.version = version;
  }
}
