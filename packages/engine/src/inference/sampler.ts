/**
 * Picks the next token from one row of logits, in plain JS over the V (=264) floats of that row:
 * temperature, top-k, top-p, then a draw from a seeded PRNG. Reports the token's log-probability under
 * the raw model distribution (temperature 1, no truncation): the quantity `TrainEngine.logprobs` computes,
 * so RL importance ratios compare like with like.
 */

/** How to pick a token. */
export interface SamplingParams {
  /** 0 picks the most likely token. */
  temperature: number;
  /** Keep the smallest set of tokens whose probability reaches this mass (1 keeps all). */
  topP: number;
  /** Keep the k most likely tokens (0 keeps all). */
  topK: number;
}

/** The chosen token, its raw log-probability, and the most likely alternatives when asked for. */
export interface SampledToken {
  token: number;
  /** Log-probability of `token` under the raw model distribution. */
  logprob: number;
  /** The most likely tokens with their raw log-probabilities, best first (only when asked for). */
  top?: { token: number; logprob: number }[];
}

/**
 * Samples from `logits[offset .. offset+V)`. `uniform` is a draw in [0, 1) from the row's PRNG; it is
 * always consumed (even when greedy) so that a row's random stream does not depend on its settings.
 */
export function sampleToken(
  logits: Float32Array,
  offset: number,
  V: number,
  params: SamplingParams,
  uniform: number,
  topLogprobs = 0,
): SampledToken {
  let max = Number.NEGATIVE_INFINITY;
  let argmax = 0;
  for (let i = 0; i < V; i++) {
    const x = logits[offset + i];
    if (x > max) {
      max = x;
      argmax = i;
    }
  }
  let sum = 0;
  for (let i = 0; i < V; i++) sum += Math.exp(logits[offset + i] - max);
  const logZ = max + Math.log(sum);

  let token = argmax;
  if (params.temperature > 0) token = draw(logits, offset, V, params, max, uniform);
  const result: SampledToken = { token, logprob: logits[offset + token] - logZ };
  if (topLogprobs > 0) {
    const order = Array.from({ length: V }, (_, i) => i).sort(
      (a, b) => logits[offset + b] - logits[offset + a],
    );
    result.top = order.slice(0, topLogprobs).map((t) => ({ token: t, logprob: logits[offset + t] - logZ }));
  }
  return result;
}

function draw(
  logits: Float32Array,
  offset: number,
  V: number,
  params: SamplingParams,
  max: number,
  u: number,
): number {
  const invT = 1 / params.temperature;
  const probs = new Float64Array(V);
  let total = 0;
  for (let i = 0; i < V; i++) {
    probs[i] = Math.exp((logits[offset + i] - max) * invT);
    total += probs[i];
  }
  const truncate = (params.topK > 0 && params.topK < V) || params.topP < 1;
  if (!truncate) {
    let acc = 0;
    const target = u * total;
    for (let i = 0; i < V; i++) {
      acc += probs[i];
      if (acc > target) return i;
    }
    return V - 1;
  }
  // Find the probability threshold of the kept set with a native numeric sort of the values (no comparator
  // callbacks: ~5x faster than sorting indices), then draw among the tokens at or above it, in id order.
  const sorted = Float64Array.from(probs).sort(); // ascending
  const kCount = params.topK > 0 && params.topK < V ? params.topK : V;
  let threshold = sorted[V - kCount]; // top-k first, as HF and vLLM order them
  let pool = 0;
  for (let r = V - kCount; r < V; r++) pool += sorted[r];
  if (params.topP < 1) {
    let mass = 0;
    for (let r = V - 1; r >= V - kCount; r--) {
      mass += sorted[r];
      if (mass >= params.topP * pool) {
        threshold = Math.max(threshold, sorted[r]);
        break;
      }
    }
  }
  let kept = 0;
  for (let i = 0; i < V; i++) if (probs[i] >= threshold) kept += probs[i];
  let acc = 0;
  const target = u * kept;
  let last = 0;
  for (let i = 0; i < V; i++) {
    if (probs[i] < threshold) continue;
    acc += probs[i];
    last = i;
    if (acc > target) return i;
  }
  return last;
}
