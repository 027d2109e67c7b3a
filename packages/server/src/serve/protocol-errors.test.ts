import assert from "node:assert/strict";
import { createServer, maxHeaderSize, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { answerProtocolErrors } from "./protocol-errors.ts";

/** Sends `bytes` on a raw connection; resolves with everything the server wrote before it closed the connection. */
function exchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let answer = "";
    socket.on("data", (d) => {
      answer += d;
    });
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "ECONNRESET" && error.code !== "EPIPE") reject(error);
    });
    socket.on("close", () => resolve(answer));
  });
}

/** The status line and the JSON body of a raw HTTP answer. */
function parse(answer: string): { statusLine: string; error: Record<string, unknown> } {
  const [head, body] = answer.split("\r\n\r\n");
  return { statusLine: head.split("\r\n")[0], error: JSON.parse(body).error };
}

describe("requests Node's HTTP parser refuses", () => {
  let server: Server;
  let port: number;
  before(async () => {
    server = createServer((_request, response) => response.end("ok"));
    answerProtocolErrors(server, { requestTimeoutMs: 300_000 });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers a URL past the header limit with 431 and a message naming the limit", async () => {
    const answer = await exchange(port, `GET /v1/traces?${"a=1&".repeat(5_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const { statusLine, error } = parse(answer);
    assert.equal(statusLine, "HTTP/1.1 431 Request Header Fields Too Large");
    assert.equal(error.code, "request_header_fields_too_large");
    assert.match(String(error.message), new RegExp(`exceed ${maxHeaderSize} bytes`));
  });

  it("answers bytes that are not HTTP with 400 and a message naming the parser's error", async () => {
    const { statusLine, error } = parse(await exchange(port, "NOT HTTP AT ALL\r\n\r\n"));
    assert.equal(statusLine, "HTTP/1.1 400 Bad Request");
    assert.equal(error.type, "bad_request");
    assert.match(String(error.message), /not valid HTTP\/1\.1 \(HPE_/);
  });

  it("still answers a valid request on the same server", async () => {
    const answer = await exchange(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assert.match(answer, /^HTTP\/1\.1 200 OK/);
  });
});
