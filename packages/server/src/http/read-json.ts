import type { IncomingMessage } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import {
  checkJsonDepth,
  checkJsonValue,
  DEFAULT_JSON_LIMITS,
  type JsonLimits,
  type LoneSurrogatePolicy,
  mayHoldLoneSurrogates,
} from "@arc/core";
import type { Context } from "hono";
import { HttpError } from "./http-error.ts";
import { requestHeader } from "./request-header.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const gunzipAsync = promisify(gunzip);

/** Bodies past this size are read in several turns of the event loop (see `readJson`). */
const LARGE_BODY_BYTES = 256 * 1024;

/** How a route reads its body beyond the byte limit: the JSON bounds and what to do with lone surrogates. */
export interface ReadJsonOptions {
  /** Bounds on depth, strings, arrays and objects; DEFAULT_JSON_LIMITS when absent. */
  limits?: JsonLimits;
  /** `refuse` (400 naming the field, the default) or `replace` with U+FFFD (telemetry, where a span is best kept). */
  loneSurrogates?: LoneSurrogatePolicy;
}

/** The node:http request behind `c` on `arc serve`; undefined for an app called through `app.fetch`. */
function nodeRequest(c: Context): IncomingMessage | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
}

/** The error of a body past its limit while it is read. */
function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, "payload_too_large", `body exceeds the limit of ${maxBytes} bytes`);
}

/**
 * A node:http request's body: at once when it has arrived whole, else through its events (cheaper than iterating
 * the stream). Past `maxBytes` it is refused at once and the rest is left flowing unread, so that a client still
 * sending reads the 413 rather than a reset connection (the HTTP server drains what follows, within its own bounds
 * of time and bytes, then closes the connection).
 */
function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if (incoming.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (incoming.complete && incoming.readableLength <= maxBytes) {
    // the whole body has arrived (a small one comes with its headers): taken from the stream's buffer at once
    const whole = incoming.read() as Buffer | null;
    incoming.resume();
    return Promise.resolve(whole ?? Buffer.alloc(0));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (error?: Error) => {
      incoming.off("data", onData).off("end", onEnd).off("error", settle).off("close", onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      settle(tooLarge(maxBytes));
    };
    const onEnd = () => settle();
    const onClose = () =>
      settle(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    incoming.on("data", onData).once("end", onEnd).once("error", settle).once("close", onClose);
  });
}

/** A web request's body (an app called through `app.fetch`), read whole; past `maxBytes` its reading stops. */
async function readWebBody(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body) {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    }
  }
  return Buffer.concat(chunks, size);
}

/**
 * Reads a request body's bytes, refusing with a status that names the problem: 413 past `maxBytes` (checked on the
 * stream, so a lying Content-Length does not help, and again after decompression, so a small gzip bomb does not
 * either), 415 for a Content-Encoding other than gzip or identity, 400 for an empty body or broken gzip.
 */
export async function readBody(c: Context, maxBytes: number): Promise<Buffer> {
  const encoding = (requestHeader(c, "content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "gzip") {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `Content-Encoding ${JSON.stringify(encoding)} is not supported: send gzip or no encoding`,
    );
  }
  const declared = Number(requestHeader(c, "content-length") ?? "0");
  if (declared > maxBytes) {
    throw new HttpError(
      413,
      "payload_too_large",
      `body of ${declared} bytes exceeds the limit of ${maxBytes} bytes`,
    );
  }
  const incoming = nodeRequest(c);
  const bytes = incoming
    ? await readIncoming(incoming, maxBytes)
    : await readWebBody(c.req.raw.body, maxBytes);
  if (bytes.byteLength === 0) throw new HttpError(400, "invalid_request", "request body is empty");
  if (encoding === "identity") return bytes;
  try {
    return await gunzipAsync(bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") {
      throw new HttpError(
        413,
        "payload_too_large",
        `decompressed body exceeds the limit of ${maxBytes} bytes`,
      );
    }
    throw new HttpError(
      400,
      "invalid_request",
      `request body is not valid gzip: ${(error as Error).message}`,
    );
  }
}

/**
 * Reads a request body as JSON, refusing with a status that names the problem: those of `readBody`, 415 for a
 * non-JSON content type, 400 for invalid UTF-8 or JSON, and 400 naming the field for a value past the JSON bounds
 * (depth, sizes, lone surrogates, NUL, `__proto__`).
 */
export async function readJson(
  c: Context,
  maxBytes: number,
  options: ReadJsonOptions = {},
): Promise<unknown> {
  const contentType = requestHeader(c, "content-type") ?? "";
  if (contentType && !/^application\/(.+\+)?json\b/i.test(contentType)) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      `expected Content-Type application/json, got "${contentType}"`,
    );
  }
  return parseJsonBody(await readBody(c, maxBytes), options);
}

/** Parses body bytes as JSON and holds the value to the JSON bounds, refusing as `readJson` does. */
export async function parseJsonBody(bytes: Buffer, options: ReadJsonOptions = {}): Promise<unknown> {
  const size = bytes.byteLength;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError(400, "invalid_request", "request body is not valid UTF-8");
  }
  const limits = options.limits ?? DEFAULT_JSON_LIMITS;
  // a large body is decoded, scanned, parsed and checked in separate turns of the event loop, so other requests
  // wait for one of those steps at a time rather than for all of them
  const large = size > LARGE_BODY_BYTES;
  if (large) await nextTurn();
  checkJsonDepth(text, limits.maxDepth);
  if (large) await nextTurn();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, "malformed_json", `request body is not valid JSON: ${(error as Error).message}`);
  }
  if (large) await nextTurn();
  // PostgreSQL cannot store the NUL character in text or jsonb: it is refused up front, naming where it is
  return checkJsonValue(value, limits, {
    surrogates: options.loneSurrogates ?? "refuse",
    mayHoldLoneSurrogates: mayHoldLoneSurrogates(text),
    mayHoldNul: text.includes("\\u0000"),
  });
}

/** Like `readJson`, but an absent or empty body reads as `{}` (for endpoints whose body is optional). */
export async function readOptionalJson(
  c: Context,
  maxBytes: number,
  options: ReadJsonOptions = {},
): Promise<unknown> {
  if ((!nodeRequest(c) && !c.req.raw.body) || requestHeader(c, "content-length") === "0") return {};
  try {
    return await readJson(c, maxBytes, options);
  } catch (error) {
    if (error instanceof HttpError && /body is empty/.test(error.message)) return {};
    throw error;
  }
}
