import type { Detector } from "./detector.ts";
import { modelTurns } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

/** Fails a trace with an LLM step that ended without error yet said nothing (no text, no tool call). */
export const emptyOutputDetector: Detector = {
  id: "empty_output",
  description: "the model returned nothing",
  detect(trace) {
    const empty = modelTurns(trace).find(
      (t) => !t.step.error && t.step.llm?.output !== undefined && t.text.trim() === "",
    );
    if (!empty) return [];
    return [
      failedVerdict(trace.id, "empty_output", {
        class: "empty_output",
        severity: "high",
        message: "the model returned an empty output",
        stepId: empty.step.id,
      }),
    ];
  },
};
