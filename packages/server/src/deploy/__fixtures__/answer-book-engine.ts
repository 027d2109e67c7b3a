import type { GenerateOptions, GenRequest, GenResult, InferenceEngine } from "@arc/core";

/**
 * TEST DOUBLE for a trained model, which cannot be trained within a unit test's time: answers each prompt from a
 * book (last user message → answer), `fallback` otherwise. It streams token by token like the real engine, so the
 * gateway, validator and deployer run on it exactly as on `EmbeddedInferenceEngine`.
 */
export class AnswerBookEngine implements InferenceEngine {
  /** Every prompt it was asked, for tests that count requests. */
  readonly asked: string[] = [];

  constructor(
    private readonly book: ReadonlyMap<string, string>,
    private readonly fallback = "I do not know.",
  ) {}

  getVersion(): number {
    return 1;
  }

  async setWeights(): Promise<void> {}

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    const results: GenResult[] = [];
    requests.forEach((request, requestIndex) => {
      const question = [...(request.messages ?? [])].reverse().find((m) => m.role === "user")?.content ?? "";
      this.asked.push(question);
      const text = this.book.get(question) ?? this.fallback;
      const tokens = [...Buffer.from(text)];
      for (let sampleIndex = 0; sampleIndex < (request.n ?? 1); sampleIndex++) {
        const chars = [...text];
        for (const [i, ch] of chars.entries()) {
          options.onToken?.({
            requestIndex,
            sampleIndex,
            token: ch.charCodeAt(0) & 0xff,
            logprob: -0.1,
            version: 1,
            textDelta: ch,
            finishReason: i === chars.length - 1 ? "stop" : undefined,
          });
        }
        results.push({
          requestId: request.id,
          sampleIndex,
          text,
          promptTokens: [1, 2, 3],
          outputTokens: tokens,
          outputLogprobs: tokens.map(() => -0.1),
          outputVersions: tokens.map(() => 1),
          finishReason: "stop",
        });
      }
    });
    await new Promise((resolve) => setImmediate(resolve));
    return results;
  }
}
