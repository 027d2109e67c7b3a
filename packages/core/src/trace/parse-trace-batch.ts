import { InvalidInputError } from "../errors/index.ts";
import { compileJsonReader, notAccepted } from "./compile-json-reader.ts";
import { toInvalidInputError } from "./format-zod-error.ts";
import { Feedback, TraceBatch } from "./schema.ts";

const readTraceBatch = compileJsonReader(TraceBatch);
const readFeedback = compileJsonReader(Feedback);

/**
 * Validates the body of `POST /v1/traces` against `TraceBatch` and returns what `TraceBatch.parse` would. Ingest
 * calls it once per batch, so a batch the compiled reader accepts does not pay for zod's issue bookkeeping (most of
 * zod's cost); a body it does not accept goes through zod, whose issues make the InvalidInputError naming each
 * offending field (`traces.1.startedAt: must be an ISO 8601 date-time, ...`).
 */
export function parseTraceBatch(body: unknown): TraceBatch {
  const batch = readTraceBatch(body);
  if (batch !== notAccepted) return batch;
  const parsed = TraceBatch.safeParse(body);
  if (!parsed.success) throw toInvalidInputError(parsed.error);
  return parsed.data;
}

/**
 * Validates the body of `POST /v1/feedback`: one Feedback or a non-empty array of at most `maxItems`. Like
 * `parseTraceBatch`, the compiled reader takes the common case and zod names the field of a refused item
 * (`3.traceId: ...`).
 */
export function parseFeedbackBatch(body: unknown, maxItems: number): Feedback[] {
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0)
    throw new InvalidInputError("expected a feedback object or a non-empty array of them");
  if (items.length > maxItems) {
    throw new InvalidInputError(
      `${items.length} feedback items exceed the limit of ${maxItems} a request; send them in several requests`,
    );
  }
  return items.map((item, i) => {
    const read = readFeedback(item);
    if (read !== notAccepted) return read;
    const parsed = Feedback.safeParse(item);
    if (!parsed.success) throw toInvalidInputError(parsed.error, Array.isArray(body) ? String(i) : "");
    return parsed.data;
  });
}
