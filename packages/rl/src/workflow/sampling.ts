import type { GenRequest, GenResult } from "@arc/core";

/** How a workflow samples: the GenRequest fields it passes through unchanged. */
export type SamplingOptions = Pick<
  GenRequest,
  "maxTokens" | "temperature" | "topP" | "topK" | "stop" | "seed"
>;

/** The [min, max] weight version over every output token of the turns; `fallback` when no token was produced. */
export function versionRange(turns: readonly GenResult[], fallback: number): [number, number] {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const turn of turns) {
    for (const v of turn.outputVersions) {
      if (v < min) min = v;
      if (v > max) max = v;
    }
  }
  return min === Number.POSITIVE_INFINITY ? [fallback, fallback] : [min, max];
}
