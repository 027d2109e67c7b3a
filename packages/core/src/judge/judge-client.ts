/** One call to a judge model. */
export interface JudgeRequest {
  model: string;
  messages: { role: "system" | "user"; content: string }[];
  responseFormat: Record<string, unknown>;
  maxTokens: number;
  /** When the caller stops waiting for it (ms since the epoch): a queue gives up on the call then. */
  deadline?: number;
  /** Aborts the call (a queue's deadline). */
  signal?: AbortSignal;
}

/** An OpenAI-compatible chat call: the judge model's reply text and the tokens it took. */
export interface JudgeClient {
  complete(request: JudgeRequest): Promise<{ content: string; tokens?: number }>;
}

/**
 * A judge endpoint's failure; `transient` when trying again later may succeed (no connection, HTTP 429 or 5xx),
 * not when the endpoint refused the request (another 4xx) or its answer was unreadable.
 */
export class JudgeEndpointError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = "JudgeEndpointError";
  }
}

/**
 * A judge client over an OpenAI-compatible `POST {baseUrl}/chat/completions` (an upstream, a registered model,
 * `arc engine serve`), with a time limit; an HTTP error or a time-out is a `JudgeEndpointError` naming the status
 * or the limit.
 */
export function openAIJudgeClient(options: {
  baseUrl: string;
  apiKey?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}): JudgeClient {
  const send = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 20_000;
  return {
    async complete({ model, messages, responseFormat, maxTokens, signal }) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const response = await send(`${options.baseUrl.replace(/\/$/, "")}/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model,
          messages,
          response_format: responseFormat,
          max_tokens: maxTokens,
          temperature: 0,
        }),
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      }).catch((error: Error) => {
        if (timeout.aborted) throw new JudgeEndpointError(`no answer within ${timeoutMs} ms`, true);
        if (signal?.aborted)
          throw new JudgeEndpointError(`no answer by its deadline (${String(signal.reason)})`, false);
        throw new JudgeEndpointError(`the judge endpoint failed: ${error.message}`, true);
      });
      const text = await response.text();
      if (!response.ok)
        throw new JudgeEndpointError(
          `the judge endpoint answered HTTP ${response.status}: ${text.slice(0, 200)}`,
          response.status === 429 || response.status >= 500,
        );
      const body = JSON.parse(text) as {
        choices?: { message?: { content?: string | null } }[];
        usage?: { total_tokens?: number };
      };
      const content = body.choices?.[0]?.message?.content;
      if (typeof content !== "string")
        throw new JudgeEndpointError(
          `the judge endpoint's answer has no message content: ${text.slice(0, 200)}`,
          false,
        );
      return { content, tokens: body.usage?.total_tokens };
    },
  };
}
