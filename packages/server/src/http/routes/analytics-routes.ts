import { InvalidInputError, Timestamp, toInvalidInputError } from "@arc/core";
import { Hono } from "hono";
import { z } from "zod";
import { getAnalyticsSettings, putAnalyticsSettings } from "../../analytics/analytics-settings.ts";
import { tenantAnalytics } from "../../analytics/tenant-analytics.ts";
import type { Database } from "../../store/database.ts";
import type { AuthVariables } from "../auth-middleware.ts";
import { readJson } from "../read-json.ts";

/** How far back `GET /v1/analytics` looks when `since` is not given. */
const DEFAULT_DAYS = 28;

const dateOnly = z.string().date();
/** A date (UTC midnight) or a date-time with its offset, in the years 0001-9999 as a stored timestamp holds. */
const isoDate = z
  .string()
  .refine(
    (s) => (dateOnly.safeParse(s).success && !s.startsWith("0000")) || Timestamp.safeParse(s).success,
    "expected an ISO 8601 date (2026-11-01, midnight UTC) or date-time with offset (2026-11-01T12:00:00Z), in the years 0001-9999",
  )
  .transform((s) => new Date(s));

const AnalyticsQuery = z
  .object({
    since: isoDate.optional(),
    until: isoDate.optional(),
    fixWindowDays: z.coerce.number().int().min(1).max(90).default(7),
  })
  .strict();

/**
 * A tenant's learning analytics: `GET /v1/analytics?since=&until=&fixWindowDays=` (default: the last 28 days, a
 * 7-day window on each side of a promotion) and its settings, `GET/PUT /v1/analytics/settings` (prices per model and
 * the cost of a failure).
 */
export function analyticsRoutes(deps: { db: Database; maxBodyBytes: number }) {
  const app = new Hono<{ Variables: AuthVariables }>();

  app.get("/analytics", async (c) => {
    const parsed = AnalyticsQuery.safeParse(c.req.query());
    if (!parsed.success) throw toInvalidInputError(parsed.error);
    const until = parsed.data.until ?? new Date();
    const since = parsed.data.since ?? new Date(until.getTime() - DEFAULT_DAYS * 86_400_000);
    if (since >= until)
      throw new InvalidInputError(`since: expected a time before until (${until.toISOString()})`, {
        field: "since",
      });
    return c.json(
      await tenantAnalytics(deps.db, c.get("tenantId"), {
        since,
        until,
        fixWindowDays: parsed.data.fixWindowDays,
      }),
    );
  });

  app.get("/analytics/settings", async (c) => c.json(await getAnalyticsSettings(deps.db, c.get("tenantId"))));

  app.put("/analytics/settings", async (c) =>
    c.json(await putAnalyticsSettings(deps.db, c.get("tenantId"), await readJson(c, deps.maxBodyBytes))),
  );
  return app;
}
