import { errorBody } from "./http-error.ts";

/** The routes of the OpenAI-compatible gateway, whose every error is answered in OpenAI's shape. */
export function isOpenAiPath(path: string): boolean {
  return path === "/v1/chat/completions" || path === "/v1/models" || path.startsWith("/v1/models/");
}

/** An error body as OpenAI's API writes it. */
export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

/** OpenAI's message for a request with no key. */
const MISSING_KEY =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";

/**
 * An error raised at the HTTP edge (key, body, route) in OpenAI's shape, `{error: {message, type, param, code}}`,
 * with OpenAI's types and codes: 401 `invalid_api_key` (no code when no key was sent), `Invalid URL (...)` for an
 * unknown route, no code for a body that is not JSON, `request_too_large` for a body past the limit (as
 * `arc engine serve` answers it), `server_error` for 5xx.
 */
export function openAiEdgeError(
  error: unknown,
  request: { method: string; path: string },
): { status: number; body: OpenAiErrorBody } {
  const { status, body } = errorBody(error);
  const { type, message, field } = body.error as { type: string; message: string; field?: string };
  const answer = (msg: string, code: string | null, errorType = "invalid_request_error") => ({
    status,
    body: { error: { message: msg, type: errorType, param: field ?? null, code } },
  });
  if (status >= 500) return answer(message, null, "server_error");
  if (status === 401)
    return type === "missing_api_key" ? answer(MISSING_KEY, null) : answer(message, "invalid_api_key");
  if (status === 404 && type === "not_found")
    return answer(`Invalid URL (${request.method} ${request.path})`, null);
  if (status === 413) return answer(message, "request_too_large");
  if (status === 429) return answer(message, "rate_limit_exceeded", "requests");
  if (type === "malformed_json" || type === "invalid_request") return answer(message, null);
  return answer(message, type);
}
