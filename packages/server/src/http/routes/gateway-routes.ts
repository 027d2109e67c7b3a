import { Hono } from "hono";
import type { ChatGateway } from "../../gateway/chat-gateway.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/**
 * The OpenAI-compatible gateway under `/v1`, behind the tenant key: `POST /chat/completions` (stream and not) and
 * `GET /models[/{id}]`. Headers `x-arc-session` / `x-arc-user` make canary routing sticky; `x-arc-env` names the task
 * environment so the recorded trace can be verified. Errors, a body that cannot be read included, are answered in
 * OpenAI's shape (see `openAiEdgeError`).
 */
export function gatewayRoutes(
  gateway: ChatGateway,
  maxBodyBytes: number,
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.get("/models", (c) => gateway.models(c.get("tenantId")));
  app.get("/models/:id{.+}", (c) => gateway.model(c.get("tenantId"), c.req.param("id")));
  app.post("/chat/completions", async (c) => {
    const body = await readJson(c, maxBodyBytes);
    return gateway.chat(c.get("tenantId"), body, {
      sessionId: c.req.header("x-arc-session"),
      userId: c.req.header("x-arc-user"),
      env: c.req.header("x-arc-env"),
      pattern: c.req.header("x-arc-pattern"),
      correlation: {
        traceId: c.req.header("x-arc-trace-id"),
        stepId: c.req.header("x-arc-step-id"),
        parentStepId: c.req.header("x-arc-parent-step-id"),
      },
      signal: c.req.raw.signal,
    });
  });
  return app;
}
