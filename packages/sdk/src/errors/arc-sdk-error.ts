/** Base of the errors the SDK throws on purpose (only ever for invalid arguments, never for Arc being down). */
export class ArcSdkError extends Error {
  private readonly arcSdkErrorMarker = true;
  /** The option or argument at fault, e.g. `baseUrl` or `feedback.score`. */
  readonly field: string;

  constructor(message: string, options: { name: string; field: string }) {
    super(message);
    this.name = options.name;
    this.field = options.field;
  }

  /** True for an error of this family, even from another copy of the package. */
  static isInstance(error: unknown): error is ArcSdkError {
    return (
      typeof error === "object" &&
      error !== null &&
      (error as { arcSdkErrorMarker?: unknown }).arcSdkErrorMarker === true
    );
  }
}

/** An option of `createArc` (or its environment variable) that cannot work; thrown once, at setup. */
export class ArcConfigError extends ArcSdkError {
  constructor(field: string, message: string) {
    super(`${field}: ${message}`, { name: "ArcConfigError", field });
  }
}

/** An argument of a call such as `feedback()` that the server would reject; a bug in the caller. */
export class ArcInputError extends ArcSdkError {
  constructor(field: string, message: string) {
    super(`${field}: ${message}`, { name: "ArcInputError", field });
  }
}
