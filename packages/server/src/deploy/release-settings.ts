import { CanaryPolicy, toInvalidInputError, ValidationGates } from "@arc/core";
import type { z } from "zod";
import type { Queryable } from "../store/database.ts";

/** A tenant's release settings: its validation gates and canary policy (defaults where it set nothing). */
export interface ReleaseSettings {
  gates: ValidationGates;
  canary: CanaryPolicy;
}

function parse<T>(
  schema: { safeParse(x: unknown): z.SafeParseReturnType<unknown, T> },
  value: unknown,
  field: string,
): T {
  const result = schema.safeParse(value);
  if (!result.success) throw toInvalidInputError(result.error, field);
  return result.data;
}

/** The tenant's settings, with defaults filled in. */
export async function getReleaseSettings(db: Queryable, tenantId: string): Promise<ReleaseSettings> {
  const rows = await db.query<{ gates: unknown; canary: unknown }>(
    "select gates, canary from release_settings where tenant_id = $1",
    [tenantId],
  );
  return {
    gates: ValidationGates.parse(rows[0]?.gates ?? {}),
    canary: CanaryPolicy.parse(rows[0]?.canary ?? {}),
  };
}

/** Replaces the given parts of a tenant's settings (validated first, so any input is safe; errors name the field). */
export async function setReleaseSettings(
  db: Queryable,
  tenantId: string,
  patch: { gates?: unknown; canary?: unknown },
): Promise<ReleaseSettings> {
  const gates = patch.gates === undefined ? undefined : parse(ValidationGates, patch.gates, "gates");
  const canary = patch.canary === undefined ? undefined : parse(CanaryPolicy, patch.canary, "canary");
  await db.query(
    `insert into release_settings (tenant_id, gates, canary) values ($1, coalesce($2::jsonb, '{}'), coalesce($3::jsonb, '{}'))
     on conflict (tenant_id) do update set gates = coalesce($2::jsonb, release_settings.gates),
       canary = coalesce($3::jsonb, release_settings.canary), updated_at = now()`,
    [tenantId, gates ? JSON.stringify(patch.gates) : null, canary ? JSON.stringify(patch.canary) : null],
  );
  return getReleaseSettings(db, tenantId);
}
