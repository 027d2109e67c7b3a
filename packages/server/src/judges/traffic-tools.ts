import type { Trace } from "@arc/core";
import type { Queryable } from "../store/database.ts";

/** How many of a tenant's most recent traces say which tools its traffic offers. */
export const TRAFFIC_TOOLS_TRACES = 200;

/** The names of offered tools, in OpenAI's form (`{type: "function", function: {name}}`) or flat (`{name}`). */
export function toolNames(tools: readonly unknown[] | undefined): string[] {
  const names = new Set<string>();
  for (const tool of tools ?? []) {
    const t = tool as { name?: unknown; function?: { name?: unknown } };
    const name = t.function?.name ?? t.name;
    if (typeof name === "string") names.add(name);
  }
  return [...names];
}

/** The tools offered anywhere in these traces, by name, sorted. */
export function tracesToolNames(traces: Iterable<Trace>): string[] {
  const names = new Set<string>();
  for (const trace of traces)
    for (const step of trace.steps) for (const name of toolNames(step.llm?.tools)) names.add(name);
  return [...names].sort();
}

/**
 * The tools offered to the tenant's traffic since `since` (an ISO date-time; its `TRAFFIC_TOOLS_TRACES` most recent
 * traces that started then or later), by name, sorted.
 */
export async function trafficToolNames(db: Queryable, tenantId: string, since: string): Promise<string[]> {
  const rows = await db.query<{ body: unknown[] }>(
    `select distinct b.body from (
       select id from traces where tenant_id = $1 and started_at >= $3
        order by started_at desc, id desc limit $2
     ) t
     join steps s on s.tenant_id = $1 and s.trace_id = t.id
     join blobs b on b.tenant_id = $1 and b.hash = s.tools_hash`,
    [tenantId, TRAFFIC_TOOLS_TRACES, since],
  );
  const names = new Set<string>();
  for (const row of rows)
    for (const name of toolNames(Array.isArray(row.body) ? row.body : [])) names.add(name);
  return [...names].sort();
}
