import type { TeachingWarning } from "./teaching-warning.ts";
import { approximateTokenCounter, type TokenCounter } from "./token-counter.ts";

/** A probe held to its budget. */
export interface ProbeText {
  /** The approach the teacher will see: trimmed, at most maxProbeTokens long. */
  approach: string;
  /** probe_truncated or empty_probe when the probe needed repair. */
  warnings: TeachingWarning[];
}

/**
 * Holds the student's probe to `maxProbeTokens`. Backends that honour maxTokens never trip this;
 * one that ignores it would otherwise hand the teacher a full solution to grade instead of an
 * approach to diagnose. `reportedTokens` (the backend's own count) wins over the counter's estimate.
 */
export function truncateProbe(
  text: string,
  maxProbeTokens: number,
  options: { reportedTokens?: number; counter?: TokenCounter } = {},
): ProbeText {
  const counter = options.counter ?? approximateTokenCounter;
  const trimmed = text.trim();
  if (trimmed === "")
    return {
      approach: "",
      warnings: [{ kind: "empty_probe", message: "student gave no approach in the probe" }],
    };
  const estimated = counter.count(trimmed);
  const tokens = Math.max(options.reportedTokens ?? 0, estimated);
  if (tokens <= maxProbeTokens) return { approach: trimmed, warnings: [] };
  // Keep the same share of the text as the budget is of the true count, in the counter's units.
  const budget = Math.floor((maxProbeTokens * estimated) / tokens);
  return {
    approach: counter.truncate(trimmed, budget).trim(),
    warnings: [
      {
        kind: "probe_truncated",
        tokens,
        maxTokens: maxProbeTokens,
        message: `probe has ${tokens} tokens, more than maxProbeTokens ${maxProbeTokens}; cut to the budget`,
      },
    ],
  };
}
