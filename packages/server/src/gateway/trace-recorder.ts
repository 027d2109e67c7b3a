import type { Trace } from "@arc/core";
import type { Database } from "../store/database.ts";
import { insertTraces } from "../store/trace-store.ts";

/** Options of the trace recorder. */
export interface TraceRecorderOptions {
  /** Flush when this many traces wait (default 500). */
  maxBatch?: number;
  /** Flush at least this often while traces wait, in ms (default 250): each flush has a fixed cost, and on the embedded PGlite it runs on this thread. */
  flushMs?: number;
  /** Called when a batch could not be stored (default: logged); the traces are dropped, the requests are not. */
  onError?: (error: unknown, lost: number) => void;
}

/**
 * Stores gateway traces in batches off the request path, through the same `insertTraces` as `POST /v1/traces`:
 * a request never waits for the database, and a burst becomes a few multi-row inserts.
 */
export class TraceRecorder {
  private queued = new Map<string, Trace[]>();
  private size = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private readonly maxBatch: number;
  private readonly flushMs: number;
  /** Traces stored so far (for metrics and tests). */
  stored = 0;

  constructor(
    private readonly db: Database,
    private readonly options: TraceRecorderOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 500;
    this.flushMs = options.flushMs ?? 250;
  }

  /** Queues a tenant's trace; it is stored within `flushMs`. */
  record(tenantId: string, trace: Trace): void {
    const list = this.queued.get(tenantId);
    if (list) list.push(trace);
    else this.queued.set(tenantId, [trace]);
    this.size++;
    if (this.size >= this.maxBatch) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Stores everything queued now; resolves when it (and any earlier flush) is done. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.queued;
    this.queued = new Map();
    this.size = 0;
    this.flushing = this.flushing.then(async () => {
      for (const [tenantId, traces] of batch) {
        try {
          await insertTraces(this.db, tenantId, traces);
          this.stored += traces.length;
        } catch (error) {
          if (this.options.onError) this.options.onError(error, traces.length);
          else console.error(`gateway: could not store ${traces.length} traces:`, error);
        }
      }
    });
    return this.flushing;
  }
}
