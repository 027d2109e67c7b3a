import { ArcInputError } from "../errors/arc-sdk-error.ts";
import type { Tracer } from "../trace/tracer.ts";
import { CHAT_COMPLETIONS, type LlmProtocol, RESPONSES } from "./llm-protocol.ts";
import type { OpenAILike } from "./openai-shapes.ts";
import { tracedCreate } from "./traced-create.ts";

const WRAPPED = Symbol.for("@arc/sdk.wrapped");

/** Whether the client's base URL is on the Arc server the SDK exports to (then Arc's gateway answers the calls). */
function sameOrigin(clientBaseUrl: unknown, arcBaseUrl: string | undefined): boolean {
  if (typeof clientBaseUrl !== "string" || !arcBaseUrl) return false;
  try {
    return new URL(clientBaseUrl).origin === new URL(arcBaseUrl).origin;
  } catch {
    return false;
  }
}

/**
 * The client with `chat.completions.create` and `responses.create` traced; the original is left untouched (use both
 * side by side).
 *
 * A `Proxy` over the client answers `chat` with an object that inherits from the real `chat`, whose
 * `completions` inherits from the real one but has its own traced `create`. Everything else is the client's
 * own, with methods bound to the real client (it keeps private fields a proxy cannot reach). The wrapped
 * `completions` points its `_client` at the proxy, so the client's helpers (`.stream()`, `.parse()`,
 * `.runTools()`) go through the traced `create` too. Wrapping twice returns the same wrapper. When the client's
 * `baseURL` is on `arcBaseUrl` (Arc's gateway), each call carries `x-arc-trace-id`/`x-arc-step-id` so the gateway
 * records its step in the SDK's trace under the same step id: one trace, one step, not two traces.
 */
export function wrapOpenAI<T extends OpenAILike>(client: T, tracer: Tracer, arcBaseUrl?: string): T {
  const completions = (client as { chat?: { completions?: { create?: unknown } } } | null)?.chat?.completions;
  if (typeof completions?.create !== "function") {
    throw new ArcInputError(
      "client",
      `expected an OpenAI client with chat.completions.create (e.g. new OpenAI()), got ${client === null ? "null" : typeof client}`,
    );
  }
  if ((client as unknown as Record<symbol, unknown>)[WRAPPED]) return client;
  let proxy: T | undefined;
  const correlate = sameOrigin((client as { baseURL?: unknown }).baseURL, arcBaseUrl);
  /**
   * An object inheriting from a resource of the client (`chat.completions`, `responses`) with its own traced
   * `create`; its `_client` is the proxy, so the resource's helpers call the traced `create` too.
   */
  const traced = (resource: { create?: unknown }, protocol: LlmProtocol) => {
    const wrapped = Object.create(resource, {
      create: {
        value: tracedCreate(
          resource.create as (...args: unknown[]) => unknown,
          resource,
          tracer,
          correlate,
          protocol,
        ),
        writable: true,
        configurable: true,
      },
    });
    if ("_client" in resource) Object.defineProperty(wrapped, "_client", { get: () => proxy });
    return wrapped;
  };
  const wrappedChat = Object.create(client.chat, {
    completions: { value: traced(completions, CHAT_COMPLETIONS), writable: true, configurable: true },
  });
  const responses = (client as { responses?: { create?: unknown } }).responses;
  const wrappedResponses = typeof responses?.create === "function" ? traced(responses, RESPONSES) : undefined;
  const bound = new WeakMap<object, unknown>();
  proxy = new Proxy(client, {
    get(target, property) {
      if (property === WRAPPED) return true;
      if (property === "chat") return wrappedChat;
      if (property === "responses" && wrappedResponses) return wrappedResponses;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function" || property === "constructor") return value;
      let fn = bound.get(value);
      if (!fn) {
        fn = value.bind(target);
        bound.set(value, fn);
      }
      return fn;
    },
  });
  return proxy;
}
