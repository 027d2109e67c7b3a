import type { VerifierFailureClass } from "../verify/index.ts";
import type { Detector } from "./detector.ts";
import { errorSignature } from "./error-signature.ts";
import { modelTurns } from "./trace-view.ts";
import { failedVerdict, passedVerdict, type Severity, unknownVerdict } from "./verdict.ts";

const SEVERITY: Record<VerifierFailureClass, Severity> = {
  parse_error: "high",
  schema_violation: "high",
  wrong_tool: "high",
  execution_error: "high",
  wrong_argument: "medium",
  wrong_answer: "medium",
  incomplete: "medium",
};

/** Classes whose error message has a useful shape to group on. */
const SIGNED: ReadonlySet<VerifierFailureClass> = new Set(["parse_error", "execution_error"]);

/**
 * Runs the verifier registered for the trace's env on the model's outputs, with the trace's reference solution
 * when one is known (`metadata.solution`, or the tenant's solution resolver): parse error, schema violation, wrong tool, wrong argument, wrong answer,
 * execution error. Says `unknown` when the trace has no model output or the verifier cannot decide.
 */
export const verifierDetector: Detector = {
  id: "verifier",
  description: "checks outputs with the env's verifier: parse, schema, tool, arguments, answer, execution",
  detect(trace, context) {
    if (!trace.env) return [];
    const verifier = context.verifierFor(trace.env);
    if (!verifier) return [];
    const turns = modelTurns(trace).filter((t) => t.hasOutput);
    if (turns.length === 0)
      return [unknownVerdict(trace.id, "verifier", "no model output in the trace to verify")];
    const result = verifier({ outputs: turns.map((t) => t.text), solution: context.solutionFor(trace) });
    const at = result.failure?.turn ?? turns.length - 1;
    const turn = turns[Math.min(at, turns.length - 1)];
    if (result.status === "pass")
      return [passedVerdict(trace.id, "verifier", "the verifier accepted the output", 1, turn.step.id)];
    if (result.status === "unknown" || !result.failure) {
      return [
        unknownVerdict(trace.id, "verifier", result.reason ?? "the verifier could not decide", turn.step.id),
      ];
    }
    const f = result.failure;
    return [
      failedVerdict(trace.id, "verifier", {
        class: f.class,
        severity: SEVERITY[f.class],
        message: f.message,
        stepId: turn.step.id,
        path: f.path,
        signature: SIGNED.has(f.class) ? errorSignature(f.message) : undefined,
        expected: f.expected,
        actual: f.actual,
        snippet: turn.text.slice(0, 160),
      }),
    ];
  },
};
