/** Base of every error Arc throws on purpose; `isInstance` works across package copies. */
export class ArcError extends Error {
  private readonly arcErrorMarker = true;
  /** HTTP status an API edge should answer with. */
  readonly statusCode: number;
  /** True when the same call may succeed if tried again later. */
  readonly isRetryable: boolean;

  constructor(
    message: string,
    options: { name?: string; statusCode?: number; isRetryable?: boolean; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = options.name ?? "ArcError";
    this.statusCode = options.statusCode ?? 500;
    this.isRetryable = options.isRetryable ?? false;
  }

  /** True for any ArcError, also one from another copy of this package where `instanceof` fails (a marker field is checked). */
  static isInstance(error: unknown): error is ArcError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as { arcErrorMarker?: unknown }).arcErrorMarker === true
    );
  }
}

/** Input that does not have the expected shape; the message names the field and what was expected. */
export class InvalidInputError extends ArcError {
  /** Dotted path of the offending field, e.g. `traces.0.steps.2.llm.messages`. */
  readonly field: string | undefined;
  constructor(message: string, options: { field?: string; cause?: unknown } = {}) {
    super(message, { name: "InvalidInputError", statusCode: 400, cause: options.cause });
    this.field = options.field;
  }
}

/** A record that does not exist, or that the caller's tenant may not see (the two are indistinguishable on purpose). */
export class NotFoundError extends ArcError {
  constructor(message: string) {
    super(message, { name: "NotFoundError", statusCode: 404 });
  }
}

/** A write that lost a race with another one for the same unique thing (a name, the one active deployment). */
export class ConflictError extends ArcError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { name: "ConflictError", statusCode: 409, isRetryable: true, cause: options.cause });
  }
}

/** Something the caller's key may not do, though the request is well formed. */
export class ForbiddenError extends ArcError {
  constructor(message: string) {
    super(message, { name: "ForbiddenError", statusCode: 403 });
  }
}
