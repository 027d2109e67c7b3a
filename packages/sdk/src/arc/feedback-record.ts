import { ArcInputError } from "../errors/arc-sdk-error.ts";
import { randomId } from "../trace/random-id.ts";
import type { WireFeedback } from "../wire/wire-types.ts";

/** Arguments of `arc.feedback`: a judgement of a trace (or one of its steps). */
export interface FeedbackInput {
  /** The trace judged (`TraceHandle.traceId`, or `arc.currentTraceId()`). */
  traceId: string;
  /** The step judged, if the judgement is about one step. */
  stepId?: string;
  /** A number the tenant defines, e.g. 0..1 or -1/+1. */
  score?: number;
  /** A short label, e.g. `wrong_tool` or `thumbs_down`. */
  label?: string;
  /** What the output should have been; becomes a `chosen` response in preference data. */
  correction?: string;
  /** Free text. */
  comment?: string;
}

const ID = /^[A-Za-z0-9._:-]{1,128}$/;

function checkText(field: string, value: unknown, max: number): void {
  if (value === undefined) return;
  if (typeof value !== "string") throw new ArcInputError(field, `expected a string, got ${typeof value}`);
  if (value.length > max)
    throw new ArcInputError(field, `expected at most ${max} characters, got ${value.length}`);
}

/** The wire record for `input`, with a fresh id; throws `ArcInputError` naming the field the server would reject. */
export function feedbackRecord(input: FeedbackInput): WireFeedback {
  if (typeof input !== "object" || input === null)
    throw new ArcInputError("feedback", `expected an object, got ${input === null ? "null" : typeof input}`);
  for (const field of ["traceId", "stepId"] as const) {
    const v = input[field];
    if (v === undefined && field === "stepId") continue;
    if (typeof v !== "string" || !ID.test(v))
      throw new ArcInputError(
        `feedback.${field}`,
        `expected an id of 1-128 letters, digits or . _ : -, got ${v === undefined ? "nothing" : JSON.stringify(v)}`,
      );
  }
  if (input.score !== undefined && (typeof input.score !== "number" || !Number.isFinite(input.score)))
    throw new ArcInputError("feedback.score", `expected a finite number, got ${String(input.score)}`);
  checkText("feedback.label", input.label, 256);
  checkText("feedback.correction", input.correction, 100_000);
  checkText("feedback.comment", input.comment, 10_000);
  if (input.score === undefined && input.label === undefined && input.correction === undefined)
    throw new ArcInputError("feedback", "needs at least one of score, label or correction");
  const record: WireFeedback = {
    id: randomId(),
    traceId: input.traceId,
    createdAt: new Date().toISOString(),
  };
  for (const field of ["stepId", "score", "label", "correction", "comment"] as const) {
    if (input[field] !== undefined) (record as unknown as Record<string, unknown>)[field] = input[field];
  }
  return record;
}
