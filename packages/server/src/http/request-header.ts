import type { IncomingMessage } from "node:http";
import type { Context } from "hono";

/**
 * A request header by lower-case name: read from the node:http request on `arc serve` (so that no web `Headers` is
 * made for the request), else from the web request (`app.fetch`). Repeated headers read as node:http joins them.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return c.req.header(name);
  const value = incoming.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}
