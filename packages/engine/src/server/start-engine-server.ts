import type { AddressInfo } from "node:net";
import type { InferenceEngine } from "@arc/core";
import { serve } from "@hono/node-server";
// Evaluated before any serve(): hono builds RESPONSE_ALREADY_SENT with the global Response of its first import, and
// serve() swaps that global for one whose instances hono writes out again (ERR_HTTP_HEADERS_SENT on the gateway's
// direct-write routes, loaded later in a process that served an engine first).
import "@hono/node-server/utils/response";
import { createEngineServer, type EngineServerOptions } from "./engine-server.ts";

/** A running engine server: its base URL (`http://host:port/v1`) and how to stop it. */
export interface RunningEngineServer {
  /** `http://host:port/v1`, what an OpenAI client takes as `baseURL`. */
  baseURL: string;
  /** The port actually bound (useful after asking for port 0). */
  port: number;
  /** Stops accepting connections and closes open ones. */
  close(): Promise<void>;
}

/**
 * Serves `createEngineServer` on a TCP port (0 picks a free one) of `host` (default 127.0.0.1). A request whose
 * head and body have not all arrived within `requestTimeoutMs` (default 30 s) is answered 408 and its connection
 * closed, so slow senders cannot hold connections open; a response may take as long as it needs.
 */
export function startEngineServer(
  engine: InferenceEngine,
  options: EngineServerOptions & { port?: number; host?: string; requestTimeoutMs?: number },
): Promise<RunningEngineServer> {
  const app = createEngineServer(engine, options);
  const host = options.host ?? "127.0.0.1";
  const timeout = options.requestTimeoutMs ?? 30_000;
  return new Promise((resolve) => {
    const server = serve(
      {
        fetch: app.fetch,
        port: options.port ?? 0,
        hostname: host,
        serverOptions: {
          requestTimeout: timeout,
          headersTimeout: timeout,
          connectionsCheckingInterval: Math.min(1_000, timeout),
        },
      },
      (info: AddressInfo) => {
        resolve({
          baseURL: `http://${host}:${info.port}/v1`,
          port: info.port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            }),
        });
      },
    );
  });
}
