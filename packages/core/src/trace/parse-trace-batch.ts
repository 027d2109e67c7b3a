import { compileJsonReader, notAccepted } from "./compile-json-reader.ts";
import { toInvalidInputError } from "./format-zod-error.ts";
import { TraceBatch } from "./schema.ts";

const readTraceBatch = compileJsonReader(TraceBatch);

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
