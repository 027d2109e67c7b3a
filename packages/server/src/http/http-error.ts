import { ArcError } from "@arc/core";

/** An error answered at the HTTP edge with this status and message. */
export class HttpError extends ArcError {
  /** A short machine-readable kind, e.g. `invalid_api_key`, `payload_too_large`. */
  readonly type: string;
  constructor(statusCode: number, type: string, message: string) {
    super(message, { name: "HttpError", statusCode });
    this.type = type;
  }
}

/** PostgreSQL's codes for a character it cannot store (NUL in text, `\u0000` in jsonb): the caller's input is at fault. */
const unstorableCharacterCodes = new Set(["22021", "22P05"]);

/** The `type` of an error answer by status. */
const errorTypes: Record<number, string> = {
  400: "invalid_request",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
};

/** The JSON body of every error answer: `{ error: { type, message, field? } }`. */
export function errorBody(error: unknown): { status: number; body: { error: Record<string, unknown> } } {
  if (unstorableCharacterCodes.has((error as { code?: string })?.code ?? "")) {
    return {
      status: 400,
      body: {
        error: {
          type: "invalid_request",
          message: "a value contains a character Arc cannot store (the NUL character, \\u0000); remove it",
        },
      },
    };
  }
  if (error instanceof HttpError) {
    return { status: error.statusCode, body: { error: { type: error.type, message: error.message } } };
  }
  if (ArcError.isInstance(error)) {
    const field = (error as { field?: string }).field;
    const type = errorTypes[error.statusCode] ?? "error";
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
