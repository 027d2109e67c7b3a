import type { Tracer } from "../trace/tracer.ts";
import { LlmCall } from "./llm-call.ts";
import { CHAT_COMPLETIONS, type LlmProtocol } from "./llm-protocol.ts";
import type { ChatRequestLike } from "./openai-shapes.ts";

/** The lazily-parsing promise `openai` v4+ returns (`APIPromise`), read structurally. */
interface ApiPromiseLike {
  responsePromise: Promise<unknown>;
  parseResponse: (this: unknown, ...args: unknown[]) => unknown;
  asResponse: (this: unknown) => Promise<unknown>;
}

function isApiPromise(value: unknown): value is ApiPromiseLike {
  const p = value as Partial<ApiPromiseLike> | null;
  return (
    typeof p?.parseResponse === "function" &&
    typeof p.asResponse === "function" &&
    typeof (p.responsePromise as { then?: unknown } | undefined)?.then === "function"
  );
}

/**
 * Hooks the call into the very `APIPromise` the client returned, which is handed back as it is: same object,
 * same class, `.withResponse()`/`.asResponse()`/`_thenUnwrap` intact, and the response still parsed only when
 * the caller asks (so `asResponse()` keeps an unread body). Its parse step is wrapped to see the data, its
 * response promise to see the error, and `asResponse` to notice a caller who never lets it parse.
 */
function instrumentApiPromise(p: ApiPromiseLike, call: LlmCall): void {
  const parse = p.parseResponse;
  p.parseResponse = async function (this: unknown, ...args: unknown[]) {
    call.parseStarted = true;
    call.noteResponse(args[1]);
    let data: unknown;
    try {
      data = await parse.apply(this, args);
    } catch (error) {
      call.fail(error);
      throw error;
    }
    call.succeed(data);
    return data;
  };
  p.responsePromise = p.responsePromise.catch((error: unknown) => {
    call.fail(error);
    throw error;
  });
  const asResponse = p.asResponse;
  p.asResponse = function (this: unknown) {
    const response = asResponse.call(this);
    response.then(
      (r) => {
        if (!call.parseStarted) call.rawResponse(r as Parameters<LlmCall["rawResponse"]>[0]);
      },
      () => {},
    );
    return response;
  };
}

/** The request options (`create`'s second argument) with `extra` headers added to the caller's own. */
function withHeaders(options: unknown, extra: Record<string, string>): Record<string, unknown> {
  const base = (typeof options === "object" && options !== null ? options : {}) as Record<string, unknown>;
  const own = base.headers;
  let headers: unknown;
  if (own instanceof Headers) {
    const copy = new Headers(own);
    for (const [k, v] of Object.entries(extra)) copy.set(k, v);
    headers = copy;
  } else if (Array.isArray(own)) headers = [...own, ...Object.entries(extra)];
  else headers = { ...(own as Record<string, unknown> | undefined), ...extra };
  return { ...base, headers };
}

/**
 * `create` as the caller knows it, traced: same arguments (plus Arc's correlation headers when `correlate`), same return value (object identity included for
 * the `openai` client's `APIPromise`), same errors. Any other thenable is observed through `then`.
 */
export function tracedCreate(
  create: (this: unknown, ...args: unknown[]) => unknown,
  target: object,
  tracer: Tracer,
  /** The client calls Arc's own gateway: send it the trace and step ids, so its record joins the SDK's. */
  correlate = false,
  /** The endpoint: `chat.completions.create` (default) or `responses.create`. */
  protocol: LlmProtocol = CHAT_COMPLETIONS,
): (...args: unknown[]) => unknown {
  return function tracedCreate(...args: unknown[]): unknown {
    let call: LlmCall | undefined;
    try {
      call = new LlmCall(tracer, args[0] as ChatRequestLike | undefined, protocol);
      if (correlate) args = [args[0], withHeaders(args[1], call.correlationHeaders()), ...args.slice(2)];
    } catch (error) {
      tracer.report(error);
    }
    let result: unknown;
    try {
      result = create.apply(target, args);
    } catch (error) {
      call?.fail(error);
      throw error;
    }
    if (!call) return result;
    if (isApiPromise(result)) {
      try {
        instrumentApiPromise(result, call);
      } catch (error) {
        tracer.report(error);
      }
      return result;
    }
    if (typeof (result as { then?: unknown } | null)?.then === "function") {
      return (result as PromiseLike<unknown>).then(
        (data) => {
          call.succeed(data);
          return data;
        },
        (error: unknown) => {
          call.fail(error);
          throw error;
        },
      );
    }
    call.succeed(result);
    return result;
  };
}
