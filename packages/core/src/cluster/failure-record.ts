import type { FailureClass, Judgement } from "../detect/index.ts";
import { traceModelVersion, traceQuestion } from "../detect/index.ts";
import type { Trace } from "../trace/index.ts";

/** One failed trace as clustering sees it: the primary verdict's features plus the request text. */
export interface FailureRecord {
  traceId: string;
  class: FailureClass;
  /** Tool/schema path of the fault, e.g. `get_weather.unit`. */
  path?: string;
  /** Normalized error message, e.g. `unsupported currency yen`. */
  signature?: string;
  /** The user's request (clustering normalizes it). */
  text: string;
  /** Excerpt of the failed output, for examples. */
  output?: string;
  /** The verdict's evidence message, for examples. */
  evidence?: string;
  env?: string;
  modelVersion?: string;
  /** When the trace started (ISO 8601): counts over time key on its day. */
  at: string;
}

/** The failure record of a judged trace, or null when the judgement is not a failure. */
export function failureRecord(trace: Trace, judgement: Judgement): FailureRecord | null {
  const primary = judgement.primary;
  if (judgement.status !== "failed" || !primary?.class) return null;
  return {
    traceId: trace.id,
    class: primary.class,
    path: primary.path,
    signature: primary.signature,
    text: traceQuestion(trace),
    output: primary.evidence.snippet,
    evidence: primary.evidence.message,
    env: trace.env,
    modelVersion: traceModelVersion(trace),
    at: trace.startedAt,
  };
}
