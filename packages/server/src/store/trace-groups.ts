import { InvalidInputError } from "@arc/core";
import type { Queryable, Row } from "./database.ts";

/** What traces are grouped by: `Trace.sessionId` or `Trace.userId`. */
export type TraceGroupKind = "session" | "user";

/** A session or a user, as the index pages list them. */
export interface TraceGroupSummary {
  /** The session's or the user's id. */
  id: string;
  traces: number;
  /** Traces judged failed, and passed. */
  failed: number;
  passed: number;
  /** Failed of those passed or failed; null when none is. */
  failureRate: number | null;
  /** ISO 8601 date-time of its first and of its latest trace. */
  firstSeen: string;
  lastSeen: string;
  /** Distinct users of a session, or sessions of a user. */
  others: number;
}

/** The columns of each kind: the one grouped by and the other one counted. */
const COLUMNS: Record<TraceGroupKind, { key: string; other: string }> = {
  session: { key: "session_id", other: "user_id" },
  user: { key: "user_id", other: "session_id" },
};

function encodeCursor(startedAt: string, traceId: string): string {
  return Buffer.from(JSON.stringify([startedAt, traceId])).toString("base64url");
}

/** A cursor's time (as ISO 8601, in years the database takes) and trace id; throws on any other text. */
function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    const time = Array.isArray(value) && typeof value[0] === "string" ? new Date(value[0]) : null;
    const year = time?.getUTCFullYear() ?? Number.NaN;
    if (time && year >= 1 && year <= 9999 && typeof value[1] === "string" && !value[1].includes("\u0000"))
      return [time.toISOString(), value[1]];
  } catch {
    // fall through to the error below
  }
  throw new InvalidInputError(
    "cursor: not a cursor this server made; pass nextCursor from the previous page",
    { field: "cursor" },
  );
}

const iso = (value: unknown) => new Date(value as string).toISOString();

/**
 * A page of a tenant's sessions or users, the most recently seen first, with their traces, verdicts, first and
 * last trace, and a cursor to the next page (null on the last). The page is found by reading traces newest first and
 * keeping each one that is its group's latest (a probe of the group's index), so a page reads the traces back to its
 * last group's latest one, not the whole table; each listed group's figures are then counted over its own traces.
 */
export async function listTraceGroups(
  db: Queryable,
  tenantId: string,
  kind: TraceGroupKind,
  options: { limit?: number; cursor?: string } = {},
): Promise<{ data: TraceGroupSummary[]; nextCursor: string | null }> {
  const limit = options.limit ?? 50;
  const { key, other } = COLUMNS[kind];
  const after = options.cursor ? decodeCursor(options.cursor) : null;
  const rows = await db.query<Row>(
    `with latest as (
       select t.${key} as id, t.started_at, t.id as trace_id
       from traces t
       where t.tenant_id = $1 and t.${key} is not null
         and ($2::timestamptz is null or (t.started_at, t.id) < ($2::timestamptz, $3::text))
         and not exists (
           select 1 from traces l
           where l.tenant_id = t.tenant_id and l.${key} = t.${key} and (l.started_at, l.id) > (t.started_at, t.id))
       order by t.started_at desc, t.id desc
       limit $4
     )
     select latest.id, latest.started_at as last_seen, latest.trace_id, g.*
     from latest cross join lateral (
       select count(*)::int as traces,
              (count(*) filter (where v.status = 'failed'))::int as failed,
              (count(*) filter (where v.status = 'passed'))::int as passed,
              min(t.started_at) as first_seen,
              count(distinct t.${other})::int as others
       from traces t left join verdicts v on v.tenant_id = t.tenant_id and v.trace_id = t.id
       where t.tenant_id = $1 and t.${key} = latest.id
     ) g
     order by latest.started_at desc, latest.trace_id desc`,
    [tenantId, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
  );
  const page = rows.slice(0, limit);
  const data = page.map((r) => {
    const failed = r.failed as number;
    const judged = failed + (r.passed as number);
    return {
      id: r.id as string,
      traces: r.traces as number,
      failed,
      passed: r.passed as number,
      failureRate: judged > 0 ? failed / judged : null,
      firstSeen: iso(r.first_seen),
      lastSeen: iso(r.last_seen),
      others: r.others as number,
    };
  });
  const last = page.at(-1);
  return {
    data,
    nextCursor:
      rows.length > limit && last ? encodeCursor(iso(last.last_seen), last.trace_id as string) : null,
  };
}
