import type { Detector } from "./detector.ts";
import { modelTurns, toolNameIn } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

/** Fails a trace where the model stopped because it hit max tokens (finish reason `length`). */
export const truncationDetector: Detector = {
  id: "truncation",
  description: "the output was cut off at max tokens (finish reason length)",
  detect(trace) {
    const cut = modelTurns(trace).find((t) => t.step.llm?.finishReason === "length");
    if (!cut) return [];
    const maxTokens = cut.step.llm?.params?.max_tokens ?? cut.step.llm?.params?.maxTokens;
    return [
      failedVerdict(trace.id, "truncation", {
        class: "truncation",
        severity: "medium",
        message: `output cut off at max tokens${maxTokens !== undefined ? ` (${maxTokens})` : ""}`,
        stepId: cut.step.id,
        path: toolNameIn(cut.text),
        snippet: cut.text.slice(-160),
      }),
    ];
  },
};
