import { ArcError, type Trace } from "@arc/core";
import type { Counter } from "prom-client";
import type { Queryable } from "../store/database.ts";
import { isolateFailures } from "../store/isolate-failures.ts";
import { insertTraces } from "../store/trace-store.ts";

/** Options of the trace recorder. */
export interface TraceRecorderOptions {
  /** Flush when this many traces wait (default 500). */
  maxBatch?: number;
  /** Flush at least this often while traces wait, in ms (default 250): each flush has a fixed cost, and on the embedded PGlite it runs on this thread. */
  flushMs?: number;
  /**
   * Most traces kept waiting while the database is slow or down (default 10,000): past it the oldest waiting trace
   * is dropped (counted), so memory stays bounded and the newest traffic is the one kept.
   */
  maxQueued?: number;
  /** Tries per batch before its traces are given up (default 3), waiting `retryDelayMs` × the try number between. */
  maxAttempts?: number;
  /** Base wait between tries in ms (default 200). */
  retryDelayMs?: number;
  /**
   * Counts traces by `outcome`: `stored`, `dropped` (queue full), `retried` (a failed try to be tried again), `lost`
   * (every try failed), `rejected` (the database refused that trace; its `cause` label names why). The server passes
   * `ServerMetrics.gatewayTraces`, shown on `/metrics`.
   */
  counter?: Counter<"outcome" | "cause">;
  /** Called when a batch could not be stored after every try (default: logged); the requests are not affected. */
  onError?: (error: unknown, lost: number) => void;
  /** Called for each trace the database refused, with the `cause` it is counted under (default: logged). */
  onRejected?: (error: unknown, trace: Trace, cause: string) => void;
}

/** SQLSTATE classes of failures that may pass if tried again: connection, rollback, resources, operator, system. */
const transientClasses = new Set(["08", "40", "53", "57", "58"]);

/** A PostgreSQL SQLSTATE (its classes are two digits, F0, HV, P0 or XX), not a Node error code such as EPIPE. */
const sqlState = /^([0-9]{2}|F0|HV|P0|XX)[0-9A-Z]{3}$/;

/** PostgreSQL's names for the conditions a trace's own content raises, the `cause` of a rejected trace. */
const conditionNames: Record<string, string> = {
  "22P02": "invalid_text_representation",
  "22P05": "untranslatable_character",
  "22021": "character_not_in_repertoire",
  "22003": "numeric_value_out_of_range",
  "22007": "invalid_datetime_format",
  "22008": "datetime_field_overflow",
  "54000": "program_limit_exceeded",
  "54001": "statement_too_complex",
};

/**
 * Whether a failed write may pass if tried again: the database was unreachable, busy or restarting (a network error,
 * a transient SQLSTATE class, a retryable ArcError). Otherwise the traces written are at fault.
 */
function isTransient(error: unknown): boolean {
  if (ArcError.isInstance(error)) return error.isRetryable;
  const code = (error as { code?: unknown } | null)?.code;
  return !(typeof code === "string" && sqlState.test(code)) || transientClasses.has(code.slice(0, 2));
}

/** The `cause` label of a rejected trace: PostgreSQL's condition name (or `sqlstate_<code>`), else the error's name. */
function causeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && sqlState.test(code)) return conditionNames[code] ?? `sqlstate_${code}`;
  return error instanceof Error ? error.name : "unknown";
}

/**
 * Stores gateway traces in batches off the request path, through the same `insertTraces` as `POST /v1/traces`:
 * a request never waits for the database, and a burst becomes a few multi-row inserts. At most `maxQueued` traces
 * wait, plus the one batch being written. A batch that the database refuses for its content is split in halves
 * until each trace at fault is alone, so one bad trace is rejected and every other one is stored.
 */
export class TraceRecorder {
  private queue: { tenantId: string; trace: Trace }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** True while a drain is chained but has not started: later flushes ride on it instead of chaining more. */
  private drainPending = false;
  private readonly maxBatch: number;
  private readonly flushMs: number;
  private readonly maxQueued: number;
  private readonly maxAttempts: number;
  private readonly retryDelayMs: number;
  /** Traces stored so far (for metrics and tests). */
  stored = 0;
  /** Traces dropped because the queue was full. */
  dropped = 0;
  /** Traces given up after every try failed. */
  lost = 0;
  /** Traces the database refused for their content. */
  rejected = 0;

  constructor(
    private readonly db: Queryable,
    private readonly options: TraceRecorderOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.flushMs = options.flushMs ?? 250;
    this.maxQueued = options.maxQueued ?? 10_000;
    this.maxAttempts = options.maxAttempts ?? 3;
    this.retryDelayMs = options.retryDelayMs ?? 200;
    for (const [name, value] of Object.entries({
      maxBatch: this.maxBatch,
      maxQueued: this.maxQueued,
      maxAttempts: this.maxAttempts,
    })) {
      if (!Number.isInteger(value) || value < 1) {
        throw new Error(`TraceRecorder ${name}: expected an integer >= 1, got ${value}`);
      }
    }
  }

  /** Traces waiting to be written (not counting the batch being written). */
  get queued(): number {
    return this.queue.length;
  }

  /** Queues a tenant's trace; it is stored within `flushMs` unless the queue overflows first. */
  record(tenantId: string, trace: Trace): void {
    if (this.queue.length >= this.maxQueued) {
      this.queue.shift();
      this.dropped++;
      this.options.counter?.inc({ outcome: "dropped" });
    }
    this.queue.push({ tenantId, trace });
    if (this.queue.length >= this.maxBatch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Stores everything queued now; resolves when it (and any earlier flush) is done. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.drainPending) {
      this.drainPending = true;
      this.flushing = this.flushing.then(() => {
        this.drainPending = false;
        return this.drain();
      });
    }
    return this.flushing;
  }

  /**
   * Writes what is queued when it starts. Calls recorded meanwhile wait for the next flush (the timer, or a full
   * batch), so that a busy gateway writes a few large batches rather than one small batch after another.
   */
  private async drain(): Promise<void> {
    let due = this.queue.length;
    while (due > 0 && this.queue.length > 0) {
      const batch = this.queue.splice(0, Math.min(due, this.maxBatch));
      due -= batch.length;
      // per tenant, inserts of distinct trace ids: a later record of the same trace (another gateway call of one
      // SDK trace) goes to a later insert, which merges it
      const byTenant = new Map<string, { ids: Set<string>; traces: Trace[] }[]>();
      for (const { tenantId, trace } of batch) {
        const inserts = byTenant.get(tenantId) ?? [];
        byTenant.set(tenantId, inserts);
        let insert = inserts.find((i) => !i.ids.has(trace.id));
        if (!insert) {
          insert = { ids: new Set(), traces: [] };
          inserts.push(insert);
        }
        insert.ids.add(trace.id);
        insert.traces.push(trace);
      }
      for (const [tenantId, inserts] of byTenant) {
        for (const { traces } of inserts) await this.store(tenantId, traces);
      }
    }
  }

  /**
   * Writes one tenant's traces, trying again while the database fails transiently (see `isTransient`); a batch it
   * refuses for its content is split until each trace at fault is alone and rejected.
   */
  private store(tenantId: string, traces: Trace[]): Promise<void> {
    return isolateFailures(
      traces,
      (batch) => this.storeWithRetries(tenantId, batch),
      (trace, error) => this.reject(trace, error),
    );
  }

  /** One insert of `traces`, tried again on transient failures; throws only when their content is refused. */
  private async storeWithRetries(tenantId: string, traces: Trace[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await insertTraces(this.db, tenantId, traces);
        this.stored += traces.length;
        this.options.counter?.inc({ outcome: "stored" }, traces.length);
        return;
      } catch (error) {
        if (!isTransient(error)) throw error;
        if (attempt < this.maxAttempts) {
          this.options.counter?.inc({ outcome: "retried" }, traces.length);
          await new Promise((r) => setTimeout(r, this.retryDelayMs * attempt));
          continue;
        }
        this.lost += traces.length;
        this.options.counter?.inc({ outcome: "lost" }, traces.length);
        if (this.options.onError) this.options.onError(error, traces.length);
        else console.error(`gateway: could not store ${traces.length} traces after ${attempt} tries:`, error);
        return;
      }
    }
  }

  private reject(trace: Trace, error: unknown): void {
    const cause = causeOf(error);
    this.rejected++;
    this.options.counter?.inc({ outcome: "rejected", cause });
    if (this.options.onRejected) this.options.onRejected(error, trace, cause);
    else console.error(`gateway: the database refused trace ${trace.id} (${cause}):`, error);
  }
}
