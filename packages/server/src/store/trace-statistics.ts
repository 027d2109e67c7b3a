import type { Queryable } from "./database.ts";

/** Traces added through one database handle since its last ANALYZE of `traces`, and when to analyze next. */
interface TraceGrowth {
  /** New traces since the last ANALYZE. */
  added: number;
  /** Analyze once `added` reaches this: the table's size at the last ANALYZE (so it doubles between two). */
  analyzeAt: number;
  /** An ANALYZE is running; other inserts do not start one. */
  running: boolean;
}

/** PostgreSQL's autovacuum_analyze_threshold: a table this small gets its first statistics after this many rows. */
const firstAnalyzeAfter = 50;

const growthByDatabase = new WeakMap<Queryable, TraceGrowth>();

/**
 * Keeps the planner's statistics of `traces` no older than half its size, as ingest grows it. Every foreign key into
 * `traces` (from steps, the detection queue, verdicts, feedback) is checked with a plan each connection caches; made
 * while `traces` is small or has no statistics, that plan goes through `traces_by_time` or a sequential scan, so
 * every step inserted reads all the tenant's traces (on a PostgreSQL server, a batch of 100 steps took 45 ms after
 * 7,500 traces, 7 ms once analyzed). ANALYZE makes every connection plan it again. PGlite runs no autovacuum at all,
 * and a server's looks only once a minute, so ingest analyzes `traces` itself: after its first 50 new traces, then
 * whenever it has added as many as the table held at the last ANALYZE (so log2 of its growth times; ~20 ms each in
 * PGlite at 6,000 traces).
 *
 * Call after an insert; a failed ANALYZE is not the caller's failure (the traces are stored), so it is
 * tried again after the next insert.
 */
export async function keepTraceStatisticsCurrent(db: Queryable, addedTraces: number): Promise<void> {
  let growth = growthByDatabase.get(db);
  if (!growth) {
    growth = { added: 0, analyzeAt: firstAnalyzeAfter, running: false };
    growthByDatabase.set(db, growth);
  }
  growth.added += addedTraces;
  if (growth.running || growth.added < growth.analyzeAt) return;
  growth.running = true;
  try {
    await db.exec("analyze traces");
    const [table] = await db.query<{ rows: number }>(
      "select reltuples::float8 as rows from pg_class where oid = 'traces'::regclass",
    );
    growth.added = 0;
    growth.analyzeAt = Math.max(firstAnalyzeAfter, table?.rows ?? 0);
  } catch {
    // Statistics only make later statements faster; the next insert tries again.
  } finally {
    growth.running = false;
  }
}
