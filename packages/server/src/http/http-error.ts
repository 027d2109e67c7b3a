import { ArcError } from "@arc/core";

/** An error answered at the HTTP edge with this status and message. */
export class HttpError extends ArcError {
  /** A short machine-readable kind, e.g. `unauthorized`, `payload_too_large`. */
  readonly type: string;
  constructor(statusCode: number, type: string, message: string) {
    super(message, { name: "HttpError", statusCode });
    this.type = type;
  }
}

/** The JSON body of every error answer: `{ error: { type, message, field? } }`. */
export function errorBody(error: unknown): { status: number; body: { error: Record<string, unknown> } } {
  if (error instanceof HttpError) {
    return { status: error.statusCode, body: { error: { type: error.type, message: error.message } } };
  }
  if (ArcError.isInstance(error)) {
    const field = (error as { field?: string }).field;
    const type =
      error.statusCode === 404 ? "not_found" : error.statusCode === 400 ? "invalid_request" : "error";
    return {
      status: error.statusCode,
      body: { error: { type, message: error.message, ...(field ? { field } : {}) } },
    };
  }
  return {
    status: 500,
    body: { error: { type: "internal_error", message: "internal error; see the server log" } },
  };
}
