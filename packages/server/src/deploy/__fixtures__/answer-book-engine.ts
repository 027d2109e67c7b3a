import type { GenerateOptions, GenRequest, GenResult, InferenceEngine, ToolCallSyntax } from "@arc/core";

/**
 * TEST DOUBLE for a trained model, which cannot be trained within a unit test's time: answers each prompt from a
 * book (last user message → answer), `fallback` otherwise, one token per character, cut at `maxTokens`. It streams
 * token by token like the real engine and writes tool calls as Arc's byte models do, so the gateway, validator and
 * deployer run on it exactly as on `EmbeddedInferenceEngine`. It ignores grammars.
 */
export class AnswerBookEngine implements InferenceEngine {
  readonly toolCallSyntax: ToolCallSyntax = "arc-json";
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
      const whole = [...(this.book.get(question) ?? this.fallback)];
      const chars = whole.slice(0, request.maxTokens ?? whole.length);
      const finishReason = chars.length < whole.length ? "length" : "stop";
      const text = chars.join("");
      const tokens = chars.map((ch) => ch.charCodeAt(0) & 0xff);
      for (let sampleIndex = 0; sampleIndex < (request.n ?? 1); sampleIndex++) {
        for (const [i, ch] of chars.entries()) {
          options.onToken?.({
            requestIndex,
            sampleIndex,
            token: ch.charCodeAt(0) & 0xff,
            logprob: -0.1,
            version: 1,
            textDelta: ch,
            finishReason: i === chars.length - 1 ? finishReason : undefined,
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
          finishReason,
          ...(request.topLogprobs
            ? {
                topLogprobs: tokens.map((t) =>
                  Array.from({ length: request.topLogprobs ?? 0 }, (_, j) => ({
                    token: (t + j) & 0xff,
                    logprob: j === 0 ? -0.1 : -5 - j,
                  })),
                ),
              }
            : {}),
        });
      }
    });
    await new Promise((resolve) => setImmediate(resolve));
    return results;
  }
}
