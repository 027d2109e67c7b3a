import type { Detector } from "./detector.ts";
import { errorSignature } from "./error-signature.ts";
import { failedVerdict } from "./verdict.ts";

/** Fails a trace where a tool step the agent ran reported an error (for tools Arc cannot run itself). */
export const toolErrorDetector: Detector = {
  id: "tool_error",
  description: "a tool the agent called returned an error",
  detect(trace) {
    const step = trace.steps.find((s) => s.kind === "tool" && s.error);
    if (!step?.error) return [];
    return [
      failedVerdict(trace.id, "tool_error", {
        class: "execution_error",
        severity: "high",
        message: `tool ${step.name ?? "(unnamed)"} failed: ${step.error.message}`,
        stepId: step.id,
        path: step.name,
        signature: errorSignature(step.error.message),
        actual: step.input,
      }),
    ];
  },
};
