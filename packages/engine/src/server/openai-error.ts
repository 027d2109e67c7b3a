/** An error answered in OpenAI's shape: `{error: {message, type, param, code}}` with an HTTP status. */
export class OpenAIError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;

  constructor(
    status: number,
    message: string,
    options: { type?: string; param?: string; code?: string } = {},
  ) {
    super(message);
    this.name = "OpenAIError";
    this.status = status;
    this.type = options.type ?? (status >= 500 ? "server_error" : "invalid_request_error");
    this.param = options.param ?? null;
    this.code = options.code ?? null;
  }

  /** The JSON body OpenAI clients parse. */
  body(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** OpenAI's 404 for a model the server does not serve. */
export function modelNotFound(name: string): OpenAIError {
  return new OpenAIError(404, `The model \`${name}\` does not exist or you do not have access to it.`, {
    code: "model_not_found",
  });
}
