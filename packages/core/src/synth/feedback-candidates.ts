import type { Feedback } from "../trace/index.ts";
import type { ChosenCandidate } from "./preference-set.ts";

/** Human corrections from feedback as `chosen` candidates, by trace id (feedback without a correction gives none). */
export function candidatesFromFeedback(feedback: readonly Feedback[]): Record<string, ChosenCandidate[]> {
  const out: Record<string, ChosenCandidate[]> = {};
  for (const f of feedback) {
    if (f.correction === undefined) continue;
    const list = out[f.traceId] ?? [];
    list.push({ text: f.correction, source: "human" });
    out[f.traceId] = list;
  }
  return out;
}
