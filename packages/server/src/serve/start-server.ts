import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Hono } from "hono";
import type { ServerConfig } from "../config/server-config.ts";
import { dashboardRoutes } from "../dashboard/dashboard-routes.ts";
import { createApp } from "../http/app.ts";
import { Authenticator } from "../http/authenticator.ts";
import { ServerMetrics } from "../metrics/metrics-registry.ts";
import { createRunService, type OrchestratorConfigInput, type RunService } from "../orchestrator/index.ts";
import type { Database } from "../store/database.ts";
import { openDatabase } from "../store/open-database.ts";
import { bootstrapDatabase } from "./bootstrap.ts";
import { type LocalCredentials, readCredentials, writeCredentials } from "./credentials.ts";
import { createFailureService, type FailureServiceOptions } from "./failure-service.ts";
import { answerProtocolErrors } from "./protocol-errors.ts";
import { createReleaseService, type ReleaseService, type ReleaseServiceOptions } from "./release-service.ts";
import { tenantRoutes } from "./tenant-routes.ts";

/** A running Arc server. */
export interface RunningServer {
  /** `http://<host>:<port>` with the port actually bound (useful with port 0). */
  url: string;
  /** The server's database, for tests and in-process tools. */
  db: Database;
  /** The Hono app, for `app.request(...)` without sockets. */
  app: Hono;
  /** What `GET /metrics` renders. */
  metrics: ServerMetrics;
  /** Keys for the local user: made on this start, or read from `<home>/credentials.json`; null if neither. */
  credentials: LocalCredentials | null;
  /** True when this start made the credentials (the first start against this database). */
  firstStart: boolean;
  /** Gateway, validator and deployer of this process. */
  release: ReleaseService;
  /** Training runs of this process: the orchestrator and `/v1/runs`. */
  runs: RunService;
  /** Stops listening, then closes the release service, the failure workers and the runs, then the database. */
  close(): Promise<void>;
}

/**
 * Serves `app` on the config's host and port and resolves once it listens: slow senders get 408 once a request has
 * not arrived whole in time (responses may take as long as they need), malformed requests are answered, and
 * `inFlight.count` counts the requests being answered.
 */
async function listen(app: Hono, config: ServerConfig, inFlight: { count: number }): Promise<Server> {
  const timeout = config.requestTimeoutMs;
  const server = serve({
    fetch: app.fetch,
    hostname: config.host,
    port: config.port,
    serverOptions: {
      requestTimeout: timeout,
      headersTimeout: timeout,
      connectionsCheckingInterval: Math.min(1_000, timeout),
    },
  }) as Server;
  answerProtocolErrors(server, { requestTimeoutMs: timeout });
  // ahead of the app's listener, which may read the count before it first awaits
  server.prependListener("request", (_request: IncomingMessage, response: ServerResponse) => {
    inFlight.count++;
    response.once("close", () => inFlight.count--);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  return server;
}

/** Opens and migrates the database, bootstraps keys on first start, and listens. */
export async function startServer(
  config: ServerConfig,
  options: {
    release?: Omit<ReleaseServiceOptions, "db">;
    failures?: Omit<FailureServiceOptions, "db">;
    /** Orchestrator settings over the ARC_ORCHESTRATOR* variables. */
    orchestrator?: OrchestratorConfigInput;
  } = {},
): Promise<RunningServer> {
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    home: config.home,
    queryTimeoutMs: config.queryTimeoutMs,
  });
  const made = await bootstrapDatabase(db);
  if (made) writeCredentials(config.home, made);
  const metrics = new ServerMetrics();
  const authenticator = new Authenticator(db, config.adminKey);
  const registration = { home: config.home, upstreams: config.upstreams, modelsDir: config.modelsDir };
  const release = createReleaseService({
    db,
    metrics,
    judgeUpstreams: config.upstreams,
    traceRecorder: { maxQueued: config.gatewayTraceQueue },
    modelPoolSize: config.gatewayModelPoolSize,
    ...options.release,
  });
  /** Requests this server is answering now: detection yields to them. */
  const inFlight = { count: 0 };
  metrics.watch({
    db,
    gatewayTraceQueue: () => release.gateway.recorder.queued,
    requestsInFlight: () => inFlight.count,
  });
  const failures = await createFailureService({
    db,
    judgeUpstreams: config.upstreams,
    busy: () => inFlight.count > 0,
    ...options.failures,
  });
  /** The address the server listens on, once it does. */
  let listening: string | undefined;
  const runs = await createRunService({
    db,
    publicUrl: () => config.publicUrl ?? listening,
    home: config.home,
    config: options.orchestrator,
    setupRegistry: options.failures?.setupRegistry,
    judgeUpstreams: config.upstreams,
  });
  const app = createApp({
    db,
    authenticator,
    metrics,
    maxBodyBytes: config.maxBodyBytes,
    tenantRoutes: tenantRoutes({
      db,
      maxBodyBytes: config.maxBodyBytes,
      release: { service: release, registration },
      failures,
      runs,
    }),
  });
  app.route("/ui", dashboardRoutes({ fetchApi: (request) => app.fetch(request), authenticator }));
  app.get("/", (c) => c.redirect("/ui", 302));
  let server: Server;
  try {
    server = await listen(app, config, inFlight);
  } catch (error) {
    await db.close();
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  listening = `http://${config.host}:${port}`;
  release.start();
  failures.start();
  runs.start();
  return {
    url: listening,
    db,
    app,
    metrics,
    credentials: made ?? readCredentials(config.home),
    firstStart: made !== null,
    release,
    runs,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await release.close();
      await failures.close();
      await runs.close();
      await db.close();
    },
  };
}
