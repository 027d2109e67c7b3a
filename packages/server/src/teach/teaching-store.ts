import type { NdrDecision } from "@arc/core";
import type { Queryable } from "../store/database.ts";
import type { TeachingConfig } from "./teaching-config.ts";

/** A pattern whose teaching the NDR monitor switched off, kept until an operator resets it. */
export interface SwitchedOffPattern {
  /** When it was switched off. */
  at: string;
  /** The monitor's decision at that moment (NDR, samples, bounds, reason). */
  decision: NdrDecision;
}

/** What is stored per tenant: the config and the patterns switched off. */
export interface TeachingState {
  /** The tenant's teaching config; null when it never set one. */
  config: TeachingConfig | null;
  /** Pattern id → why its teaching is off. */
  switchedOff: Record<string, SwitchedOffPattern>;
}

const keyOf = (tenantId: string) => `teaching:${tenantId}`;

/** The tenant's teaching state (rows of the `settings` table, key `teaching:<tenant>`). */
export async function getTeachingState(db: Queryable, tenantId: string): Promise<TeachingState> {
  const rows = await db.query<{ value: TeachingState }>("select value from settings where key = $1", [
    keyOf(tenantId),
  ]);
  return rows[0]?.value ?? { config: null, switchedOff: {} };
}

/** Replaces the tenant's teaching state. */
export async function putTeachingState(db: Queryable, tenantId: string, state: TeachingState): Promise<void> {
  await db.query(
    "insert into settings (key, value) values ($1, $2::jsonb) on conflict (key) do update set value = excluded.value",
    [keyOf(tenantId), JSON.stringify(state)],
  );
}
