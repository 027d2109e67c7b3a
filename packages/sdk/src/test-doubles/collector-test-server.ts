import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { WireFeedback, WireTrace } from "../wire/wire-types.ts";

/** One request the collector received. */
export interface CollectedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: unknown;
  /** The status the collector answered with. */
  status: number;
}

/** What the collector answers; the default is 202 `{accepted: n}`. */
export interface CollectorReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * TEST DOUBLE of the Arc ingest server (`POST /v1/traces`, `POST /v1/feedback`) for the SDK's tests and
 * benchmark: a real `node:http` server on 127.0.0.1 that records what the SDK posts and answers what the test
 * tells it to. The real server's own integration test with the SDK lives with the server.
 */
export class CollectorTestServer {
  /** Every request received, in order (including the ones answered with an error). */
  readonly requests: CollectedRequest[] = [];
  /** Decides the answer to each request; replace it to simulate failures. */
  reply: (request: Omit<CollectedRequest, "status">) => CollectorReply = (request) => ({
    status: 202,
    body: { accepted: (request.body as { traces?: unknown[] } | undefined)?.traces?.length ?? 1 },
  });
  private readonly listeners = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    /** Base URL to give the SDK, e.g. `http://127.0.0.1:41234`. */
    readonly url: string,
  ) {}

  /** Starts a collector on `port` (0: one the OS picks). */
  static async start(port = 0): Promise<CollectorTestServer> {
    let collector: CollectorTestServer | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const request = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body };
        const reply = collector!.reply(request);
        collector!.requests.push({ ...request, status: reply.status });
        res.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        res.end(JSON.stringify(reply.body ?? {}));
        for (const listener of collector!.listeners) listener();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
    collector = new CollectorTestServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return collector;
  }

  /** Every trace received in a request the collector acknowledged (2xx), in arrival order. */
  traces(): WireTrace[] {
    return this.acknowledged("/v1/traces").flatMap((r) => (r.body as { traces: WireTrace[] }).traces);
  }

  /** Every feedback record received in a request the collector acknowledged (2xx). */
  feedback(): WireFeedback[] {
    return this.acknowledged("/v1/feedback").map((r) => r.body as WireFeedback);
  }

  /** Resolves once `condition()` holds after some request, or rejects after `timeoutMs`. */
  waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(check);
        reject(
          new Error(`collector: condition not met within ${timeoutMs} ms (${this.requests.length} requests)`),
        );
      }, timeoutMs);
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
    });
  }

  /** Stops listening and drops open connections. */
  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private acknowledged(path: string): CollectedRequest[] {
    return this.requests.filter((r) => r.path === path && r.status < 300);
  }
}

/** A 127.0.0.1 port that was free a moment ago: where nothing listens, to play "Arc is down". */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
