import { ArcError } from "@arc/core";

/** An OpenAI-compatible endpoint refused or failed a completion; carries the upstream status. */
export class ChatModelError extends ArcError {
  /** The upstream HTTP status; absent when the endpoint could not be reached or answered garbage. */
  readonly upstreamStatus: number | undefined;

  constructor(message: string, options: { upstreamStatus?: number; cause?: unknown } = {}) {
    const status = options.upstreamStatus;
    super(message, {
      name: "ChatModelError",
      statusCode: status !== undefined && status >= 400 && status < 500 ? status : 502,
      isRetryable: status === undefined || status === 429 || status >= 500,
      cause: options.cause,
    });
    this.upstreamStatus = status;
  }
}
