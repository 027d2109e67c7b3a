import { maxHeaderSize, type Server } from "node:http";
import type { Duplex } from "node:stream";

/** How a request Node's HTTP parser refused is answered: status line, error kind, and what to tell the client. */
function refusalOf(code: string | undefined, limits: { headerBytes: number; requestTimeoutMs: number }) {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: "431 Request Header Fields Too Large",
        kind: "request_header_fields_too_large",
        message: `the request line and headers exceed ${limits.headerBytes} bytes: send a shorter URL (move long values into the body) or fewer headers`,
      };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return {
        status: "413 Payload Too Large",
        kind: "payload_too_large",
        message: "a chunk's extensions exceed 16384 bytes",
      };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: "408 Request Timeout",
        kind: "request_timeout",
        message: `the request did not arrive whole within ${limits.requestTimeoutMs} ms`,
      };
    default:
      return {
        status: "400 Bad Request",
        kind: "bad_request",
        message: `the request is not valid HTTP/1.1 (${code ?? "unreadable"})`,
      };
  }
}

/**
 * Answers each request Node's HTTP parser refuses before any route sees it (a request line and headers past
 * `maxHeaderSize`, a request not whole in time, bytes that are not HTTP) as Node would, with the same status, but
 * with an error body that says why: `{error: {type, message, param, code}}`, readable by Arc's clients and by
 * OpenAI's. Like Node, it writes nothing once an answer has started on the connection.
 */
export function answerProtocolErrors(server: Server, limits: { requestTimeoutMs: number }): void {
  // Node's limit for every server of the process (--max-http-header-size); Arc sets none of its own
  const headerBytes = maxHeaderSize;
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    // the response in flight on this connection, as Node's own handler checks it
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const { status, kind, message } = refusalOf(error.code, { headerBytes, ...limits });
      const body = JSON.stringify({ error: { type: kind, message, param: null, code: kind } });
      socket.write(
        `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  });
}
