import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { loadServerConfig } from "../config/server-config.ts";
import { type RunningServer, startServer } from "./start-server.ts";

/**
 * Opens a raw connection, sends `head`, then `drip` one byte every 100 ms; resolves with what the server wrote once
 * it closes the connection (or after 20 s, when the test gives up).
 */
function trickle(url: string, head: string, drip: string): Promise<string> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = "";
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => socket.destroy(), 20_000);
    socket.on("connect", () => {
      socket.write(head);
      timer = setInterval(() => socket.write(drip), 100);
    });
    socket.on("data", (d) => {
      answer += d;
    });
    socket.on("error", (error) => {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ECONNRESET" && code !== "EPIPE") reject(error);
    });
    socket.on("close", () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve(answer);
    });
  });
}

describe("arc serve against slow senders", () => {
  let home: string;
  let server: RunningServer;
  before(async () => {
    home = await mkdtemp(join(tmpdir(), "arc-slow-"));
    server = await startServer(loadServerConfig({ ARC_REQUEST_TIMEOUT_MS: "500" }, { home, port: 0 }));
  });
  after(async () => {
    await server?.close();
    await rm(home, { recursive: true, force: true });
  });

  it("answers 408 and closes the connection of a body that trickles in slower than ARC_REQUEST_TIMEOUT_MS", async () => {
    const key = server.credentials?.tenantKey;
    const head = `POST /v1/traces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"traces":[`;
    assert.match(await trickle(server.url, head, " "), /^HTTP\/1\.1 408 /);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });

  it("answers 408 to a request head that never ends", async () => {
    const answer = await trickle(server.url, "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ", "a");
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });
});
