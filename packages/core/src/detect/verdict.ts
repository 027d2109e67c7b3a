import type { VerifierFailureClass } from "../verify/index.ts";

/** Why a trace failed: a verifier's finding, a heuristic's, or a user's. */
export type FailureClass =
  | VerifierFailureClass
  | "refusal"
  | "truncation"
  | "empty_output"
  | "tool_loop"
  | "model_error"
  | "timeout"
  | "latency_over_budget"
  | "user_feedback"
  /** A judge model found a failure of the tenant's rubric (the rubric's class is the verdict's path). */
  | "rubric_violation";

/** How much a failure matters to the person reading the list: `info` for passes and unknowns. */
export type Severity = "info" | "low" | "medium" | "high";

/** What the detector saw, in words a person can check against the trace. */
export interface Evidence {
  message: string;
  expected?: unknown;
  actual?: unknown;
  /** A short excerpt of the output at fault. */
  snippet?: string;
}

/** A detector's judgement of a trace (or one step of it). */
export interface Verdict {
  traceId: string;
  /** The step at fault, when the detector can point at one. */
  stepId?: string;
  detectorId: string;
  /** `unknown` when the detector could not judge (missing fields, no reference solution): the trace is kept, not dropped. */
  status: "failed" | "passed" | "unknown";
  /** Same as `status === "failed"`, for quick filtering. */
  failed: boolean;
  /** Set when failed. */
  class?: FailureClass;
  severity: Severity;
  evidence: Evidence;
  /** Quality in [0, 1]: 1 fine, 0 failed; a verifier's reward or a normalized user score where there is one. */
  score: number;
  /** Tool/schema path of the fault, e.g. `get_weather.unit` or `book_table→add_event`: a clustering feature. */
  path?: string;
  /** Normalized error message (numbers and quoted values masked): a clustering feature. */
  signature?: string;
}

/** Fields a detector gives for a failed verdict; the rest is filled in. */
export interface FailureFinding {
  class: FailureClass;
  severity: Severity;
  message: string;
  stepId?: string;
  path?: string;
  signature?: string;
  expected?: unknown;
  actual?: unknown;
  snippet?: string;
  score?: number;
}

/** A failed verdict. */
export function failedVerdict(traceId: string, detectorId: string, f: FailureFinding): Verdict {
  return {
    traceId,
    stepId: f.stepId,
    detectorId,
    status: "failed",
    failed: true,
    class: f.class,
    severity: f.severity,
    evidence: { message: f.message, expected: f.expected, actual: f.actual, snippet: f.snippet },
    score: f.score ?? 0,
    path: f.path,
    signature: f.signature,
  };
}

/** A passed verdict. */
export function passedVerdict(
  traceId: string,
  detectorId: string,
  message: string,
  score = 1,
  stepId?: string,
): Verdict {
  return {
    traceId,
    stepId,
    detectorId,
    status: "passed",
    failed: false,
    severity: "info",
    evidence: { message },
    score,
  };
}

/** A verdict that says the detector could not judge, and why. */
export function unknownVerdict(
  traceId: string,
  detectorId: string,
  message: string,
  stepId?: string,
): Verdict {
  return {
    traceId,
    stepId,
    detectorId,
    status: "unknown",
    failed: false,
    severity: "info",
    evidence: { message },
    score: 0,
  };
}
