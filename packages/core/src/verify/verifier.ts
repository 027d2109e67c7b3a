/** Why a verifier judged an output wrong; the first check that failed decides. */
export type VerifierFailureClass =
  | "parse_error"
  | "schema_violation"
  | "wrong_tool"
  | "wrong_argument"
  | "wrong_answer"
  | "execution_error"
  | "incomplete";

/** What a verifier found wrong, precise enough to cluster on and to show a person. */
export interface VerifierFailure {
  class: VerifierFailureClass;
  /** Tool/schema path of the fault, e.g. `get_weather.unit` or `book_table→create_event`. */
  path?: string;
  message: string;
  expected?: unknown;
  actual?: unknown;
  /** Index of the model turn (output) at fault. */
  turn?: number;
}

/**
 * `pass`/`fail` when the verifier could decide; `unknown` when it could not (e.g. the reference solution
 * is missing and nothing checkable was wrong).
 */
export interface VerifyResult {
  status: "pass" | "fail" | "unknown";
  /** 1 for pass, 0 otherwise: the RLVR reward. */
  reward: number;
  failure?: VerifierFailure;
  /** Why the result is `unknown`. */
  reason?: string;
}

/** What a verifier judges: the model's outputs (one per turn) and, when known, the reference solution. */
export interface VerifyInput {
  outputs: string[];
  solution?: unknown;
}

/** Judges one episode's outputs. Pure and deterministic. */
export type Verifier = (input: VerifyInput) => VerifyResult;

/** A pass. */
export const PASS: VerifyResult = { status: "pass", reward: 1 };

/** A failure result. */
export function fail(failure: VerifierFailure): VerifyResult {
  return { status: "fail", reward: 0, failure };
}

/** An undecidable result, with the reason. */
export function unknown(reason: string): VerifyResult {
  return { status: "unknown", reward: 0, reason };
}
