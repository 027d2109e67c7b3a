import type { Detector } from "./detector.ts";
import { modelTurns } from "./trace-view.ts";
import { failedVerdict } from "./verdict.ts";

const REFUSAL =
  /\b(i'?m sorry|i am sorry|i apologi[sz]e|i can(?:'|no)?t (?:help|assist|do|comply)|i'?m (?:not able|unable) to|i am (?:not able|unable) to|i won'?t be able|as an ai\b)/i;

/** Fails a trace whose final model output is a refusal in prose ("I'm sorry, I can't help with that"). */
export const refusalDetector: Detector = {
  id: "refusal",
  description: "the model declined to do the task",
  detect(trace) {
    const last = modelTurns(trace).at(-1);
    if (!last?.hasOutput || last.text.trim().startsWith("{")) return [];
    const match = REFUSAL.exec(last.text);
    if (!match) return [];
    return [
      failedVerdict(trace.id, "refusal", {
        class: "refusal",
        severity: "high",
        message: `the model refused: "${match[0]}"`,
        stepId: last.step.id,
        snippet: last.text.slice(0, 160),
      }),
    ];
  },
};
