import type { Trace } from "@arc/core";
import type { Database } from "./database.ts";
import {
  type InsertResult,
  insertTraceStatement,
  insertTraces,
  rejectDuplicateIds,
  WRITE_SLICE_ROWS,
} from "./trace-store.ts";

/** Most traces and steps one joined statement writes: a few requests' worth, short enough to let other queries run. */
export const JOINED_WRITE_ROWS = 2 * WRITE_SLICE_ROWS;

/** One caller's batch waiting to be written. */
interface PendingWrite {
  tenantId: string;
  traces: Trace[];
  /** Traces and steps in `traces`. */
  rows: number;
  resolve(result: InsertResult): void;
  reject(error: unknown): void;
}

/** Options of a trace writer. */
export interface TraceWriterOptions {
  /**
   * Statements under way at once; batches that arrive meanwhile wait and are joined. Default: 1 on PGlite (its one
   * connection runs one statement at a time anyway), 2 on a PostgreSQL server.
   */
  concurrency?: number;
  /** Most traces and steps in one joined statement (default `JOINED_WRITE_ROWS`). */
  maxRows?: number;
}

/**
 * Group commit for ingest: batches written while earlier ones are being written wait, and the waiting batches of one
 * tenant go to the database as one statement (bulk `unnest` arrays), so that the statement's fixed cost (the round
 * trip, planning, triggers, the commit) is paid once for several requests. Each caller's promise resolves with what
 * its own batch wrote only once that statement has committed. When a joined statement fails, each of its batches is
 * written again alone, so one batch's error stays its own. A batch arriving while nothing is being written, or one of
 * `maxRows` rows or more, is written at once, alone, exactly as `insertTraces` writes it.
 */
export class TraceWriter {
  private readonly pending: PendingWrite[] = [];
  private running = 0;
  private readonly concurrency: number;
  private readonly maxRows: number;

  constructor(
    private readonly db: Database,
    options: TraceWriterOptions = {},
  ) {
    this.concurrency = options.concurrency ?? (db.kind === "pglite" ? 1 : 2);
    this.maxRows = options.maxRows ?? JOINED_WRITE_ROWS;
  }

  /** Writes a tenant's validated traces; resolves once they are committed, with what was new (see `insertTraces`). */
  write(tenantId: string, traces: Trace[]): Promise<InsertResult> {
    try {
      rejectDuplicateIds(traces);
    } catch (error) {
      return Promise.reject(error);
    }
    const rows = traces.reduce((n, t) => n + 1 + t.steps.length, 0);
    // a batch too big to join gains nothing from waiting: written at once, in slices that let others' writes run
    // between them, so a tenant's large import never holds another tenant's small batch behind all of it
    if (rows >= this.maxRows) return insertTraces(this.db, tenantId, traces);
    return new Promise((resolve, reject) => {
      this.pending.push({ tenantId, traces, rows, resolve, reject });
      this.pump();
    });
  }

  /** Starts statements while fewer than `concurrency` run and batches wait. */
  private pump(): void {
    while (this.running < this.concurrency && this.pending.length > 0) {
      const group = this.takeGroup();
      this.running++;
      void this.writeGroup(group).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  /**
   * The oldest waiting batch and the later ones of its tenant that fit beside it: at most `maxRows` rows, and no trace
   * id twice (a statement merges each id once; a re-send of the same trace goes to a later statement).
   */
  private takeGroup(): PendingWrite[] {
    const first = this.pending.shift() as PendingWrite;
    const group = [first];
    if (first.rows >= this.maxRows) return group;
    const ids = new Set(first.traces.map((t) => t.id));
    let rows = first.rows;
    for (let i = 0; i < this.pending.length && rows < this.maxRows; ) {
      const next = this.pending[i];
      if (
        next.tenantId !== first.tenantId ||
        rows + next.rows > this.maxRows ||
        next.traces.some((t) => ids.has(t.id))
      ) {
        i++;
        continue;
      }
      for (const t of next.traces) ids.add(t.id);
      rows += next.rows;
      group.push(next);
      this.pending.splice(i, 1);
    }
    return group;
  }

  private async writeGroup(group: PendingWrite[]): Promise<void> {
    if (group.length === 1) return this.writeAlone(group[0]);
    let written: Awaited<ReturnType<typeof insertTraceStatement>>;
    try {
      written = await insertTraceStatement(
        this.db,
        group[0].tenantId,
        group.flatMap((w) => w.traces),
      );
    } catch {
      // nothing of the joined statement was written: each batch alone, so that an error is its own batch's
      for (const w of group) await this.writeAlone(w);
      return;
    }
    const byId = new Map(written.map((w) => [w.id, w]));
    for (const w of group) {
      const result: InsertResult = { traces: 0, steps: 0 };
      for (const t of w.traces) {
        const row = byId.get(t.id);
        if (row?.inserted) result.traces++;
        result.steps += row?.steps ?? 0;
      }
      w.resolve(result);
    }
  }

  private async writeAlone(w: PendingWrite): Promise<void> {
    try {
      w.resolve(await insertTraces(this.db, w.tenantId, w.traces));
    } catch (error) {
      w.reject(error);
    }
  }
}

const writers = new WeakMap<Database, TraceWriter>();

/** The trace writer of a database handle (one per handle, so every route of a server joins the same writes). */
export function traceWriterOf(db: Database): TraceWriter {
  let writer = writers.get(db);
  if (!writer) {
    writer = new TraceWriter(db);
    writers.set(db, writer);
  }
  return writer;
}
