import type { ServerResponse } from "node:http";
import { Hono } from "hono";
import type { ServerMetrics } from "../metrics/metrics-registry.ts";
import type { Database } from "../store/database.ts";
import { type AuthVariables, requireRole } from "./auth-middleware.ts";
import type { Authenticator } from "./authenticator.ts";
import { errorBody, HttpError } from "./http-error.ts";
import { isOpenAiPath, openAiEdgeError } from "./openai-edge-error.ts";
import { adminRoutes } from "./routes/admin-routes.ts";
import { metricsRoutes } from "./routes/metrics-routes.ts";
import { otlpRoutes } from "./routes/otlp-routes.ts";
import { traceRoutes } from "./routes/trace-routes.ts";

/** What the HTTP app needs; everything is injected so tests can build an app on any database. */
export interface AppDeps {
  db: Database;
  authenticator: Authenticator;
  metrics: ServerMetrics;
  maxBodyBytes: number;
  /** Further routes mounted under `/v1` with a tenant key required (gateway, patterns...). */
  tenantRoutes?: { path: string; app: Hono<{ Variables: AuthVariables }> }[];
}

const ingestPaths = new Set(["/v1/traces", "/v1/otlp/v1/traces", "/v1/feedback"]);

/** The Arc HTTP API as a web-standard app: `app.fetch(Request) → Response`. */
export function createApp(deps: AppDeps): Hono {
  const app = new Hono();

  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    // a route that wrote its answer to the socket itself (the gateway) has its status there
    const outgoing = (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
    const status = outgoing?.headersSent ? outgoing.statusCode : c.res.status;
    deps.metrics.requestDuration.observe(
      { route: c.req.routePath, method: c.req.method, status: String(status) },
      (performance.now() - started) / 1000,
    );
  });

  app.onError((error, c) => {
    if (isOpenAiPath(c.req.path)) {
      const answer = openAiEdgeError(error, { method: c.req.method, path: c.req.path });
      if (answer.status >= 500) console.error(error);
      return c.json(answer.body, answer.status as 400);
    }
    const { status, body } = errorBody(error);
    if (status >= 500) console.error(error);
    if (ingestPaths.has(c.req.path) && c.req.method === "POST" && status < 500) {
      deps.metrics.rejectedRequests.inc({ reason: String(body.error.type) });
    }
    return c.json(body, status as 400);
  });
  app.notFound((c) => {
    const missing = new HttpError(404, "not_found", `no route ${c.req.method} ${c.req.path}`);
    // under /v1 an OpenAI client may be the caller: it gets OpenAI's "Invalid URL" answer
    if (c.req.path.startsWith("/v1/")) {
      const answer = openAiEdgeError(missing, { method: c.req.method, path: c.req.path });
      return c.json(answer.body, 404);
    }
    const { status, body } = errorBody(missing);
    return c.json(body, status as 404);
  });

  app.get("/health", async (c) => {
    try {
      await deps.db.query("select 1");
    } catch (error) {
      // the database cannot answer (its thread died, a statement holds it past its deadline): say so, not 500
      return c.json({ status: "unavailable", database: deps.db.kind, error: (error as Error).message }, 503);
    }
    return c.json({ status: "ok", database: deps.db.kind });
  });
  app.route("/", metricsRoutes(deps));

  const admin = new Hono<{ Variables: AuthVariables }>();
  admin.use(requireRole(deps.authenticator, "admin"));
  admin.route("/", adminRoutes(deps));
  app.route("/v1/admin", admin);

  const tenant = new Hono<{ Variables: AuthVariables }>();
  tenant.use(requireRole(deps.authenticator, "tenant"));
  tenant.route("/", traceRoutes(deps));
  tenant.route("/otlp", otlpRoutes(deps));
  for (const extra of deps.tenantRoutes ?? []) tenant.route(extra.path, extra.app);
  app.route("/v1", tenant);

  return app;
}
