import { Hono } from "hono";
import type { TeachingConfigInput } from "../../teach/teaching-config.ts";
import type { TeachingRuntime } from "../../teach/teaching-runtime.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/**
 * The tenant's run-time teaching: `GET /v1/teaching` (config and each pattern's teaching status with
 * its live NDR), `PUT /v1/teaching` (set the config), `DELETE /v1/teaching` (stop teaching),
 * `POST /v1/teaching/patterns/:id/reset` (switch a pattern back on after the NDR monitor switched it off; 404 for an
 * id that is neither a failure pattern of the tenant nor in its teaching status).
 */
export function teachingRoutes(
  runtime: TeachingRuntime,
  maxBodyBytes: number,
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();
  const actor = (c: { get(k: "principal"): { keyId: string } }) => `user:${c.get("principal").keyId}`;
  app.get("/teaching", async (c) => c.json(await runtime.status(c.get("tenantId"))));
  app.put("/teaching", async (c) => {
    const body = (await readJson(c, maxBodyBytes)) as TeachingConfigInput;
    await runtime.configure(c.get("tenantId"), body, actor(c));
    return c.json(await runtime.status(c.get("tenantId")));
  });
  app.delete("/teaching", async (c) => {
    await runtime.configure(c.get("tenantId"), null, actor(c));
    return c.json(await runtime.status(c.get("tenantId")));
  });
  app.post("/teaching/patterns/:id/reset", async (c) => {
    await runtime.reset(c.get("tenantId"), c.req.param("id"), actor(c));
    return c.json(await runtime.status(c.get("tenantId")));
  });
  return app;
}
