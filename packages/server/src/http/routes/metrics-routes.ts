import { Hono } from "hono";
import type { ServerMetrics } from "../../metrics/metrics-registry.ts";
import { type AuthVariables, requireRole } from "../auth-middleware.ts";
import type { Authenticator } from "../authenticator.ts";
import { requestHeader } from "../request-header.ts";

/**
 * `GET /metrics` in the Prometheus text format. Without a key it shows the process's series only (`process_*`,
 * `nodejs_*` and Arc's series without a tenant label); with an admin key, the per-tenant series too, whose labels
 * name every tenant. Any other key is refused (401 unknown, 403 a tenant key), never served the smaller page.
 */
export function metricsRoutes(deps: { authenticator: Authenticator; metrics: ServerMetrics }) {
  const app = new Hono<{ Variables: AuthVariables }>();
  const adminOnly = requireRole(deps.authenticator, "admin");
  app.use("/metrics", (c, next) =>
    requestHeader(c, "authorization") === undefined ? next() : adminOnly(c, next),
  );
  app.get("/metrics", async (c) => {
    const scope = c.get("principal") ? "tenants" : "process";
    return c.body(await deps.metrics.render(scope), 200, { "content-type": deps.metrics.contentType });
  });
  return app;
}
