import type { ServerResponse } from "node:http";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { type Context, Hono } from "hono";
import type { ChatGateway } from "../../gateway/chat-gateway.ts";
import { answerToResponse, type ModelAnswer, writeAnswer } from "../../gateway/model-answer.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";
import { requestHeader } from "../request-header.ts";

/** The node:http response behind a request served by `arc serve`; undefined for `app.fetch` without a socket. */
function nodeResponse(c: Context): ServerResponse | undefined {
  return (c.env as { outgoing?: ServerResponse } | undefined)?.outgoing;
}

/**
 * Sends an answer: on a socket, written straight to the node:http response (no web `Response` is made for it),
 * else as a web response.
 */
function send(c: Context, answer: ModelAnswer): Response {
  const outgoing = nodeResponse(c);
  if (!outgoing) return answerToResponse(answer);
  void writeAnswer(outgoing, answer);
  return RESPONSE_ALREADY_SENT;
}

/** A signal that aborts when the client goes away before its answer is written whole. */
function clientGone(c: Context): AbortSignal {
  const outgoing = nodeResponse(c);
  if (!outgoing) return c.req.raw.signal;
  const controller = new AbortController();
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) controller.abort(new Error("the client closed the connection"));
  });
  return controller.signal;
}

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
  app.get("/models", async (c) => send(c, await gateway.models(c.get("tenantId"))));
  app.get("/models/:id{.+}", async (c) => send(c, await gateway.model(c.get("tenantId"), c.req.param("id"))));
  app.post("/chat/completions", async (c) => {
    const body = await readJson(c, maxBodyBytes);
    const answer = await gateway.chat(c.get("tenantId"), body, {
      sessionId: requestHeader(c, "x-arc-session"),
      userId: requestHeader(c, "x-arc-user"),
      env: requestHeader(c, "x-arc-env"),
      pattern: requestHeader(c, "x-arc-pattern"),
      correlation: {
        traceId: requestHeader(c, "x-arc-trace-id"),
        stepId: requestHeader(c, "x-arc-step-id"),
        parentStepId: requestHeader(c, "x-arc-parent-step-id"),
      },
      signal: clientGone(c),
    });
    return send(c, answer);
  });
  return app;
}
