import { InvalidInputError, refuseUnknownKeys, toInvalidInputError } from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import {
  addAnnotation,
  addReviewItems,
  checkQueueName,
  listAnnotations,
  pendingReviews,
  reviewQueues,
} from "../../judges/annotation-store.ts";
import type { Database } from "../../store/database.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

const ListQuery = z
  .object({
    traceId: z.string().min(1).max(512).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

const QueueQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).optional() }).strict();

/** Most traces one request puts in a review queue. */
const MAX_REVIEW_ITEMS = 1_000;

/**
 * People's labels and the queues of traces waiting for them: `POST /v1/annotations` (`{traceId, stepId?, label:
 * pass|fail, class?, rationale}`), `GET /v1/annotations?traceId=&limit=`, `GET /v1/review-queues` (each queue with
 * its pending count), `GET /v1/review-queues/<queue>?limit=` (the traces nobody annotated since they joined, oldest
 * first) and `POST /v1/review-queues/<queue>/items` (`{traceIds, reason}`). Annotations are the gold set a judge's
 * calibration reads.
 */
export function annotationRoutes(deps: { db: Database; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.post("/annotations", async (c) => {
    const author = `user:${c.get("principal").keyId}`;
    const body = await readJson(c, deps.maxBodyBytes);
    return c.json(await addAnnotation(deps.db, c.get("tenantId"), body, author), 201);
  });

  app.get("/annotations", async (c) => {
    const parsed = ListQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    return c.json({ data: await listAnnotations(deps.db, c.get("tenantId"), parsed.data) });
  });

  app.get("/review-queues", async (c) => {
    refuseUnknownKeys(c.req.query(), [], "the review queue list's query");
    return c.json({ data: await reviewQueues(deps.db, c.get("tenantId")) });
  });

  app.get("/review-queues/:queue", async (c) => {
    const parsed = QueueQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const queue = checkQueueName(c.req.param("queue"));
    return c.json({ data: await pendingReviews(deps.db, c.get("tenantId"), queue, parsed.data.limit) });
  });

  app.post("/review-queues/:queue/items", async (c) => {
    const queue = checkQueueName(c.req.param("queue"));
    const body = await readJson(c, deps.maxBodyBytes);
    if (typeof body !== "object" || body === null || Array.isArray(body))
      throw new InvalidInputError(`expected a JSON object {traceIds, reason}, got ${JSON.stringify(body)}`);
    const b = body as Record<string, unknown>;
    refuseUnknownKeys(b, ["traceIds", "reason"], "a review queue request");
    const ids = b.traceIds;
    if (
      !Array.isArray(ids) ||
      ids.length === 0 ||
      ids.length > MAX_REVIEW_ITEMS ||
      !ids.every((id) => typeof id === "string" && id.length > 0 && id.length <= 512)
    )
      throw new InvalidInputError(
        `traceIds: expected 1 to ${MAX_REVIEW_ITEMS} trace ids, got ${JSON.stringify(ids)?.slice(0, 100)}`,
        { field: "traceIds" },
      );
    if (typeof b.reason !== "string" || b.reason.trim() === "" || b.reason.length > 500)
      throw new InvalidInputError(
        `reason: expected why these traces need a person's label, at most 500 characters, got ${JSON.stringify(b.reason)?.slice(0, 100)}`,
        { field: "reason" },
      );
    const reason = b.reason;
    const added = await addReviewItems(
      deps.db,
      c.get("tenantId"),
      queue,
      (ids as string[]).map((traceId) => ({ traceId, reason })),
    );
    return c.json({ queue, added }, 201);
  });
  return app;
}
