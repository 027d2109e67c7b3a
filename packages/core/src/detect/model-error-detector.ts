import type { Detector } from "./detector.ts";
import { errorSignature } from "./error-signature.ts";
import { failedVerdict } from "./verdict.ts";

const TIMEOUT = /time(?:d)?\s*out|timeout|etimedout|deadline exceeded/i;

/** Fails a trace whose LLM call errored: `timeout` for time-outs (or HTTP 408/504), `model_error` otherwise. */
export const modelErrorDetector: Detector = {
  id: "model_error",
  description: "the model call failed or timed out",
  detect(trace) {
    const step = trace.steps.find((s) => s.kind === "llm" && s.error);
    if (!step?.error) return [];
    const { message, type, code, status } = step.error;
    const timeout =
      TIMEOUT.test(`${type ?? ""} ${code ?? ""} ${message}`) || status === 408 || status === 504;
    const kind = [type, code, status].filter((x) => x !== undefined).join(":");
    return [
      failedVerdict(trace.id, "model_error", {
        class: timeout ? "timeout" : "model_error",
        severity: "high",
        message: `the model call failed: ${message}`,
        stepId: step.id,
        signature: kind || errorSignature(message),
      }),
    ];
  },
};
