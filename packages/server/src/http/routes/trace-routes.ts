import { parseFeedbackBatch, parseTraceBatch, Timestamp, toInvalidInputError } from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import type { ServerMetrics } from "../../metrics/metrics-registry.ts";
import type { Database } from "../../store/database.ts";
import { listTraceGroups } from "../../store/trace-groups.ts";
import { getTrace, insertFeedbackBatch, listTraces } from "../../store/trace-store.ts";
import { traceWriterOf } from "../../store/trace-writer.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

const Count = z.coerce.number().int().min(0).max(2_147_483_647);
const Id = z.string().min(1).max(256);

const ListQuery = z
  .object({
    from: Timestamp.optional(),
    to: Timestamp.optional(),
    model: Id.optional(),
    modelVersion: Id.optional(),
    env: Id.optional(),
    status: z.enum(["ok", "error", "unknown"]).optional(),
    verdict: z.enum(["failed", "passed", "unknown", "unjudged"]).optional(),
    failureClass: Id.optional(),
    pattern: Id.optional(),
    user: Id.optional(),
    session: Id.optional(),
    tag: Id.optional(),
    minLatencyMs: Count.optional(),
    maxLatencyMs: Count.optional(),
    minTokens: Count.optional(),
    maxTokens: Count.optional(),
    q: z.string().min(1).max(200).optional(),
    order: z.enum(["asc", "desc"]).optional(),
    limit: z.coerce.number().int().min(1).max(500).optional(),
    cursor: z.string().optional(),
  })
  .strict();

/** `GET /v1/sessions` and `GET /v1/users`: a page's size and the previous page's cursor. */
const GroupQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).optional(),
    cursor: z.string().max(1000).optional(),
  })
  .strict();

/** Most feedback items one `POST /v1/feedback` takes; a larger import is split by the sender. */
export const MAX_FEEDBACK_ITEMS = 20_000;

/**
 * `POST/GET /v1/traces`, `GET /v1/traces/:id`, `GET /v1/sessions`, `GET /v1/users` (each with its traces, verdicts and
 * last trace, in keyset pages), `POST /v1/feedback` for the caller's tenant.
 */
export function traceRoutes(deps: { db: Database; metrics: ServerMetrics; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post("/traces", async (c) => {
    const { traces } = parseTraceBatch(await readJson(c, deps.maxBodyBytes));
    const result = await traceWriterOf(deps.db).write(c.get("tenantId"), traces);
    deps.metrics.ingestedTraces.inc({ source: "api" }, result.traces);
    deps.metrics.ingestedSteps.inc({ source: "api" }, result.steps);
    const received = traces.reduce((n, t) => n + t.steps.length, 0);
    return c.json({ received: { traces: traces.length, steps: received }, inserted: result });
  });

  app.get("/traces", async (c) => {
    const parsed = ListQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const { q, pattern, user, session, ...rest } = parsed.data;
    return c.json(
      await listTraces(deps.db, c.get("tenantId"), {
        ...rest,
        text: q,
        patternId: pattern,
        userId: user,
        sessionId: session,
      }),
    );
  });

  for (const kind of ["session", "user"] as const) {
    app.get(`/${kind}s`, async (c) => {
      const parsed = GroupQuery.safeParse(c.req.query());
      if (!parsed.success) throw toInvalidInputError(parsed.error);
      return c.json(await listTraceGroups(deps.db, c.get("tenantId"), kind, parsed.data));
    });
  }

  app.get("/traces/:id", async (c) => c.json(await getTrace(deps.db, c.get("tenantId"), c.req.param("id"))));

  app.post("/feedback", async (c) => {
    const items = parseFeedbackBatch(await readJson(c, deps.maxBodyBytes), MAX_FEEDBACK_ITEMS);
    const created = await insertFeedbackBatch(deps.db, c.get("tenantId"), items);
    return c.json({ created, received: items.length });
  });

  return app;
}
