import type { GenerateOptions, GenRequest, GenResult, InferenceEngine, WeightSource } from "@arc/core";
import { z } from "zod";

/**
 * FAULT INJECTION, for tests and drills only: makes a served model misbehave on purpose so that rollback paths can be
 * exercised on real traffic. `wrong_output` answers with a tool call to a tool that does not exist (the request
 * still succeeds, the detectors see a failure); `error` makes generation throw (the client gets a 500).
 */
export const FaultInjection = z
  .object({
    mode: z.enum(["wrong_output", "error"]).describe("how the model misbehaves"),
    rate: z.number().min(0).max(1).default(1).describe("share of samples that misbehave"),
    seed: z.number().int().default(1).describe("seeds which samples misbehave, so a drill is reproducible"),
  })
  .strict();
export type FaultInjection = z.infer<typeof FaultInjection>;

/** The output a `wrong_output` fault answers with: a call to a tool no tenant defines. */
export const FAULT_INJECTED_OUTPUT = '{"tool":"fault_injected_tool","args":{}}';

/**
 * Wraps an engine so a share of its samples misbehave as `fault` says (see FaultInjection). In `wrong_output` mode an
 * answer is decided whole, so a streamed answer arrives as one event.
 */
export class FaultInjectingEngine implements InferenceEngine {
  private state: number;

  constructor(
    private readonly inner: InferenceEngine,
    private readonly fault: FaultInjection,
  ) {
    this.state = fault.seed >>> 0 || 1;
  }

  getVersion(): number {
    return this.inner.getVersion();
  }

  setWeights(version: number, weights: WeightSource): Promise<void> {
    return this.inner.setWeights(version, weights);
  }

  async generate(requests: GenRequest[], options: GenerateOptions = {}): Promise<GenResult[]> {
    if (this.fault.mode === "error" && this.draw()) {
      throw new Error("fault injection: generation failed on purpose");
    }
    if (this.fault.mode === "error") return this.inner.generate(requests, options);
    const results = await this.inner.generate(requests, { signal: options.signal });
    const requestOf = requests.flatMap((q, i) => Array.from({ length: q.n ?? 1 }, () => i));
    return results.map((r, k) => {
      const index = requestOf[k] ?? 0;
      const out = this.draw() ? { ...r, text: FAULT_INJECTED_OUTPUT, finishReason: "stop" as const } : r;
      if (options.onToken) {
        options.onToken({
          requestIndex: index,
          sampleIndex: out.sampleIndex,
          token: out.outputTokens.at(-1) ?? 0,
          logprob: out.outputLogprobs.at(-1) ?? 0,
          version: out.outputVersions.at(-1) ?? this.getVersion(),
          textDelta: out.text,
          finishReason: out.finishReason,
        });
      }
      return out;
    });
  }

  /** xorshift32: true with probability `rate`. */
  private draw(): boolean {
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 2 ** 32 < this.fault.rate;
  }
}
