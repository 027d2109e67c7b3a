import type { GenRequest } from "@arc/core";

/** OpenAI's bounds: a bias from -100 to 100, a penalty from -2 to 2. */
const MAX_BIAS = 100;
const MAX_PENALTY = 2;

/**
 * What one sample adds to the model's logits before each draw, as OpenAI defines `logit_bias`,
 * `frequency_penalty` and `presence_penalty`: `logit[j] + bias[j] - count[j] * frequency - (count[j] > 0) *
 * presence`, where `count[j]` is how many times token j was sampled so far in this output (the prompt is not counted).
 */
export class LogitAdjustment {
  private readonly counts = new Map<number, number>();

  private constructor(
    private readonly bias: [token: number, bias: number][],
    private readonly frequency: number,
    private readonly presence: number,
  ) {}

  /**
   * The adjustment a request asks for, or undefined when it asks for none; a TypeError names the field of a bias key
   * outside `[0, vocabSize)` or a value out of range.
   */
  static of(request: GenRequest, vocabSize: number, field: string): LogitAdjustment | undefined {
    const frequency = penalty(request.frequencyPenalty, `${field}.frequencyPenalty`);
    const presence = penalty(request.presencePenalty, `${field}.presencePenalty`);
    const bias = Object.entries(request.logitBias ?? {}).map(([key, value]): [number, number] => {
      const token = Number(key);
      if (!/^\d+$/.test(key) || token >= vocabSize)
        throw new TypeError(
          `${field}.logitBias: expected token ids from 0 to ${vocabSize - 1}, got ${JSON.stringify(key)}`,
        );
      if (typeof value !== "number" || !(Math.abs(value) <= MAX_BIAS))
        throw new TypeError(
          `${field}.logitBias[${key}]: expected a number from -${MAX_BIAS} to ${MAX_BIAS}, got ${value}`,
        );
      return [token, value];
    });
    const biased = bias.some(([, value]) => value !== 0);
    return biased || frequency !== 0 || presence !== 0
      ? new LogitAdjustment(bias, frequency, presence)
      : undefined;
  }

  /** The same adjustment for another sample of the request, with nothing sampled yet. */
  fork(): LogitAdjustment {
    return new LogitAdjustment(this.bias, this.frequency, this.presence);
  }

  /** A copy of `logits[offset .. offset+V)` with the bias added and the penalties subtracted. */
  apply(logits: Float32Array, offset: number, V: number): Float32Array {
    const row = logits.slice(offset, offset + V);
    for (const [token, bias] of this.bias) row[token] += bias;
    for (const [token, count] of this.counts) row[token] -= count * this.frequency + this.presence;
    return row;
  }

  /** Counts a token sampled into the output. */
  sampled(token: number): void {
    this.counts.set(token, (this.counts.get(token) ?? 0) + 1);
  }
}

function penalty(value: number | undefined, field: string): number {
  if (value === undefined) return 0;
  if (typeof value !== "number" || !(Math.abs(value) <= MAX_PENALTY))
    throw new TypeError(`${field}: expected a number from -${MAX_PENALTY} to ${MAX_PENALTY}, got ${value}`);
  return value;
}
