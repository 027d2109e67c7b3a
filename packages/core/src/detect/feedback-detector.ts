import type { Detector } from "./detector.ts";
import { failedVerdict, passedVerdict } from "./verdict.ts";

/**
 * Turns user feedback into verdicts: a score below `negativeScoreBelow`, a negative label, or a correction
 * fails the trace (`user_feedback`, path = the label); other feedback passes it.
 */
export const feedbackDetector: Detector = {
  id: "feedback",
  description: "negative user feedback (score, label or correction)",
  detect(trace, context) {
    const mine = context.feedback.filter((f) => f.traceId === trace.id);
    const negativeLabels = new Set(context.config.negativeLabels.map((l) => l.toLowerCase()));
    return mine.map((f) => {
      const negative =
        (f.score !== undefined && f.score < context.config.negativeScoreBelow) ||
        (f.label !== undefined && negativeLabels.has(f.label.toLowerCase())) ||
        f.correction !== undefined;
      if (!negative) return passedVerdict(trace.id, "feedback", `positive feedback ${f.id}`, 1, f.stepId);
      return failedVerdict(trace.id, "feedback", {
        class: "user_feedback",
        severity: "medium",
        message: [`negative feedback ${f.id}`, f.label, f.comment].filter(Boolean).join(": "),
        stepId: f.stepId,
        path: f.label?.toLowerCase() ?? (f.correction !== undefined ? "correction" : "score"),
        expected: f.correction,
        score: 0,
      });
    });
  },
};
