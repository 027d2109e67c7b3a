import { toInvalidInputError } from "@arc/core";
import { z } from "zod";
import type { Queryable } from "../store/database.ts";

/** USD per million tokens of one model, prompt and completion. */
const Price = z.object({ prompt: z.number().min(0), completion: z.number().min(0) }).strict();

/**
 * What a tenant sets for its analytics: prices per model (a model version's name or id, or a served or requested model
 * name as steps record it) and the cost of a failure.
 */
export const AnalyticsSettings = z
  .object({
    prices: z
      .record(z.string().min(1).max(200), Price)
      .refine((p) => Object.keys(p).length <= 500, "at most 500 models")
      .default({})
      .describe(
        'USD per 1M prompt and completion tokens, by model name, e.g. {"gpt-4o": {"prompt": 2.5, "completion": 10}}; ' +
          "calls Arc routed to a model version are priced by the version's name or id first, so the alias arc and the " +
          "served name are one model",
      ),
    costPerFailure: z.number().min(0).nullable().default(null).describe("USD a failed call costs the tenant"),
  })
  .strict();
/** A tenant's analytics settings. */
export type AnalyticsSettings = z.infer<typeof AnalyticsSettings>;

/** The tenant's settings (no prices and no cost per failure until set). */
export async function getAnalyticsSettings(db: Queryable, tenantId: string): Promise<AnalyticsSettings> {
  const [row] = await db.query<{ prices: AnalyticsSettings["prices"]; cost_per_failure: number | null }>(
    "select prices, cost_per_failure from analytics_settings where tenant_id = $1",
    [tenantId],
  );
  return { prices: row?.prices ?? {}, costPerFailure: row ? row.cost_per_failure : null };
}

/** Replaces the tenant's settings with `input` (validated; the error names the field). */
export async function putAnalyticsSettings(
  db: Queryable,
  tenantId: string,
  input: unknown,
): Promise<AnalyticsSettings> {
  const parsed = AnalyticsSettings.safeParse(input);
  if (!parsed.success) throw toInvalidInputError(parsed.error);
  await db.query(
    `insert into analytics_settings (tenant_id, prices, cost_per_failure) values ($1, $2::jsonb, $3)
     on conflict (tenant_id) do update set prices = excluded.prices, cost_per_failure = excluded.cost_per_failure,
       updated_at = now()`,
    [tenantId, JSON.stringify(parsed.data.prices), parsed.data.costPerFailure],
  );
  return parsed.data;
}
