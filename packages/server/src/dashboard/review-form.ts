import { randomUUID } from "node:crypto";

/**
 * The feedback a review form on a trace page sends to `POST /v1/feedback`: empty fields left out, the score a number
 * when it reads as one (else sent as written, for the API to refuse naming it). A correction there becomes the
 * `chosen` answer of a preference pair.
 */
export function reviewFeedback(traceId: string, form: Record<string, unknown>): Record<string, unknown> {
  const text = (name: string) => {
    const value = form[name];
    return typeof value === "string" && value.trim() ? value.trim() : undefined;
  };
  const score = text("score");
  const feedback: Record<string, unknown> = {
    id: `review-${randomUUID()}`,
    traceId,
    stepId: text("stepId"),
    label: text("label"),
    score: score === undefined ? undefined : Number.isFinite(Number(score)) ? Number(score) : score,
    correction: text("correction"),
    comment: text("comment"),
  };
  return Object.fromEntries(Object.entries(feedback).filter(([, v]) => v !== undefined));
}
