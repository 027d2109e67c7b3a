import { Hono } from "hono";
import type { ChatGateway } from "../../gateway/chat-gateway.ts";
import { openAiError } from "../../gateway/openai-error.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { errorBody } from "../http-error.ts";
import { readJson } from "../read-json.ts";

/**
 * The OpenAI-compatible gateway under `/v1`, behind the tenant key: `POST /chat/completions` (stream and not) and
 * `GET /models`. Headers `x-arc-session` / `x-arc-user` make canary routing sticky; `x-arc-env` names the task
 * environment so the recorded trace can be verified. A body that cannot be read is answered in OpenAI's error shape,
 * Arc's error type as its `code` and the field at fault as its `param`.
 */
export function gatewayRoutes(
  gateway: ChatGateway,
  maxBodyBytes: number,
): Hono<{ Variables: AuthVariables }> {
  const app = new Hono<{ Variables: AuthVariables }>();
  app.get("/models", (c) => gateway.models(c.get("tenantId")));
  app.post("/chat/completions", async (c) => {
    let body: unknown;
    try {
      body = await readJson(c, maxBodyBytes);
    } catch (error) {
      const { status, body: answer } = errorBody(error);
      if (status >= 500) throw error;
      const { message, type, field } = answer.error as { message: string; type: string; field?: string };
      return openAiError(status, message, "invalid_request_error", type, field ?? null);
    }
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
