import type { ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/**
 * A chat completion answer as the gateway passes it on, in plain values: no web `Response` or `Headers` is made on
 * the gateway's path (each costs more per call than the rest of the gateway's own work).
 */
export interface ModelAnswer {
  status: number;
  /** Headers by lower-case name, as node:http gives them; `set-cookie` may be several. */
  headers: Record<string, string | string[]>;
  /** The whole body (a JSON answer or an error), or the bytes of a stream of server-sent events as they come. */
  body: string | Uint8Array | AsyncIterable<Uint8Array>;
}

const encoder = new TextEncoder();

/** Whether the body is whole, not a stream. */
export function isWholeBody(body: ModelAnswer["body"]): body is string | Uint8Array {
  return typeof body === "string" || body instanceof Uint8Array;
}

/** A header's value (the first, if several), or "". */
export function headerValue(answer: ModelAnswer, name: string): string {
  const value = answer.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? "";
}

/** An answer whose body is `value` as JSON. */
export function jsonAnswer(
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): ModelAnswer {
  return { status, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(value) };
}

/** A web response's status, headers and body as an answer: a stream of server-sent events stays a stream. */
export async function answerFromResponse(response: Response): Promise<ModelAnswer> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  const streamed = (headers["content-type"] ?? "").includes("text/event-stream");
  const body =
    streamed && response.body
      ? (response.body as unknown as AsyncIterable<Uint8Array>)
      : new Uint8Array(await response.arrayBuffer());
  return { status: response.status, headers, body };
}

/** An answer as a web response, for callers that speak `fetch` (an OpenAI client, `app.fetch`). */
export function answerToResponse(answer: ModelAnswer): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const { body } = answer;
  const webBody = isWholeBody(body) ? body : Readable.toWeb(Readable.from(body));
  return new Response(webBody as BodyInit, { status: answer.status, headers });
}

/** The whole body's bytes, a stream read to its end. */
export async function answerBytes(answer: ModelAnswer): Promise<Uint8Array> {
  const { body } = answer;
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** The body parsed as JSON, or null when it is not JSON. */
export async function answerJson(answer: ModelAnswer): Promise<unknown> {
  try {
    return JSON.parse(Buffer.from(await answerBytes(answer)).toString("utf8"));
  } catch {
    return null;
  }
}

/** Ends a streamed body unread (the caller will not forward it); a whole body needs nothing. */
export async function discardAnswer(answer: ModelAnswer): Promise<void> {
  if (!isWholeBody(answer.body)) await answer.body[Symbol.asyncIterator]().return?.();
}

/** What `relayStream` tells about each chunk and about how the stream ended. */
export interface RelayHooks {
  /** Each chunk as it passes; returns the bytes to send on in its place. */
  chunk?(value: Uint8Array): Uint8Array;
  /** The source ended; returns bytes to send after it, if any. */
  end?(): Uint8Array | undefined;
  /** The source failed, or its reader stopped before the end (a client that went away). */
  stop?(): void;
}

/**
 * A stream that passes on `source`'s chunks through `hooks`. Exactly one of `end` and `stop` is called, once, as soon
 * as the reader reaches the end, fails or stops; stopping stops the source too.
 */
export function relayStream(source: AsyncIterable<Uint8Array>, hooks: RelayHooks): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      const inner = source[Symbol.asyncIterator]();
      let settled = false;
      let tail: Uint8Array | undefined;
      const settle = (how: "end" | "stop") => {
        if (settled) return;
        settled = true;
        if (how === "end") tail = hooks.end?.();
        else hooks.stop?.();
      };
      const next = async (): Promise<IteratorResult<Uint8Array>> => {
        if (settled) {
          const last = tail;
          tail = undefined;
          return last && last.byteLength > 0
            ? { done: false, value: last }
            : { done: true, value: undefined };
        }
        let step: IteratorResult<Uint8Array>;
        try {
          step = await inner.next();
        } catch (error) {
          settle("stop");
          throw error;
        }
        if (step.done) {
          settle("end");
          return next();
        }
        return { done: false, value: hooks.chunk ? hooks.chunk(step.value) : step.value };
      };
      return {
        next,
        async return() {
          const early = !settled;
          settle("stop");
          if (early) await inner.return?.();
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/**
 * Writes an answer to a node:http response: a whole body at once with its length, a stream chunk by chunk as it
 * comes (with backpressure). When the client goes away, the stream's source is stopped. Resolves once written.
 */
export async function writeAnswer(res: ServerResponse, answer: ModelAnswer): Promise<void> {
  const { body } = answer;
  if (isWholeBody(body)) {
    res.setHeader("content-length", typeof body === "string" ? Buffer.byteLength(body) : body.byteLength);
    res.writeHead(answer.status, answer.headers);
    res.end(body);
    return;
  }
  res.writeHead(answer.status, answer.headers);
  res.flushHeaders();
  await pipeline(body, res).catch(() => {
    // the client went away or the source failed: the pipeline has destroyed both, and the source was told
  });
}
