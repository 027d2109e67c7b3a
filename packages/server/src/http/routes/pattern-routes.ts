import {
  DetectionConfig,
  InvalidInputError,
  NotFoundError,
  refuseUnknownKeys,
  toInvalidInputError,
} from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import {
  countDeadLetteredDetections,
  deadLetteredDetections,
  pendingDetections,
} from "../../failures/detection-queue.ts";
import type { RegistrySetup } from "../../failures/failure-pipeline-config.ts";
import { trafficOverTime } from "../../failures/live-failure-rates.ts";
import { getPattern, listPatterns, recentMembers } from "../../failures/pattern-store.ts";
import { tenantRegistry } from "../../failures/tenant-registry.ts";
import { getVerdict, verdictCounts } from "../../failures/verdict-store.ts";
import type { Database } from "../../store/database.ts";
import { saveDetectorConfig } from "../../store/detector-configs.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

const PatternQuery = z
  .object({
    modelVersion: z.string().min(1).optional(),
    class: z.string().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

const TrafficQuery = z
  .object({
    hours: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 90)
      .default(24),
    buckets: z.coerce.number().int().min(1).max(500).default(48),
  })
  .strict();

/**
 * `GET /v1/traffic?hours=24&buckets=48` (traces, judged and failed per time bucket and model version),
 * `GET /v1/patterns` (largest first, with counts per day and model version and examples, plus how many traces are
 * judged, how many still wait and how many were dead-lettered), `GET /v1/patterns/:id` (with its most recent member
 * traces), `GET /v1/dead-letters` (traces detection gave up on, with their errors),
 * `GET /v1/verdicts?traceId=`, and the tenant's detector settings `GET/PUT /v1/detectors`.
 */
export function patternRoutes(deps: { db: Database; maxBodyBytes: number; setupRegistry?: RegistrySetup }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/patterns", async (c) => {
    const parsed = PatternQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const tenantId = c.get("tenantId");
    const [data, verdicts, pending, deadLettered] = await Promise.all([
      listPatterns(deps.db, tenantId, parsed.data),
      verdictCounts(deps.db, tenantId),
      pendingDetections(deps.db, tenantId),
      countDeadLetteredDetections(deps.db, tenantId),
    ]);
    return c.json({ data, verdicts, pending, deadLettered });
  });

  app.get("/traffic", async (c) => {
    const parsed = TrafficQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const { hours, buckets } = parsed.data;
    const bucketSeconds = Math.max(1, Math.round((hours * 3600) / buckets));
    const since = new Date(Date.now() - hours * 3600_000);
    const points = await trafficOverTime(deps.db, c.get("tenantId"), since, bucketSeconds);
    return c.json({ since: since.toISOString(), bucketSeconds, points });
  });

  app.get("/dead-letters", async (c) =>
    c.json({ data: await deadLetteredDetections(deps.db, c.get("tenantId")) }),
  );

  app.get("/patterns/:id", async (c) => {
    const tenantId = c.get("tenantId");
    const pattern = await getPattern(deps.db, tenantId, c.req.param("id"));
    return c.json({ ...pattern, recentTraces: await recentMembers(deps.db, tenantId, pattern.id, 20) });
  });

  app.get("/verdicts", async (c) => {
    const traceId = c.req.query("traceId");
    if (!traceId)
      throw new InvalidInputError("traceId: expected a trace id, e.g. /v1/verdicts?traceId=tr-1", {
        field: "traceId",
      });
    const verdict = await getVerdict(deps.db, c.get("tenantId"), traceId);
    if (!verdict) {
      throw new NotFoundError(
        `no verdict for trace "${traceId}" yet: it is judged once it has been quiet for the pipeline's quiet period (or it does not exist)`,
      );
    }
    return c.json(verdict);
  });

  const detectors = async (tenantId: string) => {
    const registry = await tenantRegistry(deps.db, tenantId, deps.setupRegistry);
    return { config: registry.getConfig(), detectors: registry.list() };
  };

  app.get("/detectors", async (c) => c.json(await detectors(c.get("tenantId"))));

  app.put("/detectors", async (c) => {
    const body = await readJson(c, deps.maxBodyBytes);
    if (!body || typeof body !== "object" || Array.isArray(body)) {
      throw new InvalidInputError(
        'expected a JSON object of detection settings, e.g. {"disabled": ["latency"]}',
      );
    }
    refuseUnknownKeys(body, Object.keys(DetectionConfig.shape), "the detection settings");
    const tenantId = c.get("tenantId");
    const registry = await tenantRegistry(deps.db, tenantId, deps.setupRegistry);
    registry.configure(body);
    await saveDetectorConfig(deps.db, tenantId, registry.getConfig());
    return c.json(await detectors(tenantId));
  });

  return app;
}
