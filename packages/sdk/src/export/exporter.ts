import type { WireFeedback, WireTrace } from "../wire/wire-types.ts";
import { backoffDelay, retryAfterMs } from "./backoff.ts";
import { BoundedQueue } from "./bounded-queue.ts";
import { safeStringify } from "./safe-stringify.ts";

/** The subset of the WHATWG `fetch` the exporter uses; inject your own (proxy, tests, other runtimes). */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string; signal?: AbortSignal },
) => Promise<{
  ok: boolean;
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}>;

/** Settings of the background exporter (see `ArcOptions` for what each one means and its default). */
export interface ExporterOptions {
  /** The Arc server, without `/v1` and without a trailing slash. */
  baseUrl: string;
  /** Tenant API key, sent as a bearer token. */
  apiKey: string;
  fetch: FetchLike;
  /** Traces per request. */
  maxBatchSize: number;
  /** About how many characters of JSON one request may carry. */
  maxBatchBytes: number;
  /** How long an item may wait to be batched. */
  flushIntervalMs: number;
  /** Items held at most; past it the oldest are dropped. */
  maxQueueSize: number;
  /** Counted failures an item survives before it is given up. */
  maxRetries: number;
  /** First retry delay (doubling, jittered). */
  initialBackoffMs: number;
  /** Longest retry delay. */
  maxBackoffMs: number;
  /** A request taking longer is abandoned and counts as a failure. */
  requestTimeoutMs: number;
  /** Receives rate-limited reports of trouble. */
  warn: (message: string) => void;
}

/** Counters of what the exporter did with what it was given (items are traces and feedback records). */
export interface ExporterStats {
  /** Items the server acknowledged. */
  sent: number;
  /** Items evicted because the buffer was full (oldest first), or handed over after `shutdown()`. */
  dropped: number;
  /** Items given up on: rejected by the server (4xx), retries exhausted, or not serializable to JSON. */
  failed: number;
  /** Requests that failed and were scheduled again. */
  retried: number;
  /** Items waiting in the buffer or in flight. */
  pending: number;
}

interface Item {
  kind: "trace" | "feedback";
  /** Order of arrival; `flush()` waits for every item up to the last one it saw. */
  seq: number;
  payload: WireTrace | WireFeedback;
  /** The payload as JSON, computed once when first batched and kept for retries. */
  json?: string;
  /** Counted failures so far (network outages and 429/502/503/504 do not count). */
  attempts: number;
}

type Outcome = "retry" | "retry-counted" | "split" | "drop";

interface FlushWaiter {
  target: number;
  resolve: (settled: boolean) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** What a failed request means for its batch, by HTTP status (see the README's delivery table). */
function classify(kind: Item["kind"], status: number): Outcome {
  if (status === 429 || status === 502 || status === 503 || status === 504) return "retry";
  if (status === 408 || status >= 500) return "retry-counted";
  if (status === 404 && kind === "feedback") return "retry-counted";
  if (status === 400 || status === 413 || status === 422) return "split";
  return "drop";
}

function isTimeout(error: unknown): boolean {
  const name = (error as { name?: unknown } | null)?.name;
  return name === "TimeoutError" || name === "AbortError";
}

/**
 * Sends traces and feedback to Arc in the background. `enqueue` is O(1) and never waits on the network;
 * one request is in flight at a time; failures are retried with backoff and jitter; the buffer is bounded and
 * drops the oldest items past its capacity. Timers are unref'd so the exporter never keeps a process alive.
 */
export class Exporter {
  private readonly queue: BoundedQueue<Item>;
  /** Halves of a rejected batch, sent as they are (before the queue) to isolate the item the server refuses. */
  private readonly splits: Item[][] = [];
  private inFlight: Item[] | undefined;
  private seq = 0;
  private pumping = false;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = 0;
  private backoffUntil = 0;
  private consecutiveFailures = 0;
  private waiters: FlushWaiter[] = [];
  private readonly lastWarned = new Map<string, number>();
  private readonly counts = { sent: 0, dropped: 0, failed: 0, retried: 0 };

  constructor(private readonly options: ExporterOptions) {
    this.queue = new BoundedQueue(options.maxQueueSize);
  }

  /** Hands a finished trace over for sending. O(1); never throws, never waits. */
  enqueueTrace(trace: WireTrace): void {
    this.enqueue("trace", trace);
  }

  /** Hands a feedback record over for sending. O(1); never throws, never waits. */
  enqueueFeedback(feedback: WireFeedback): void {
    this.enqueue("feedback", feedback);
  }

  /** A snapshot of the counters. */
  stats(): ExporterStats {
    return { ...this.counts, pending: this.pendingCount() };
  }

  /** The sequence number of the last item handed over; lets callers tell whether anything came in since. */
  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Sends everything handed over before this call, without waiting for the batching interval. Resolves true
   * once all of it is settled (acknowledged or given up), false if `timeoutMs` passed first. Never rejects.
   * `keepAlive` lets the wait hold the process open (used by the exit hook, whose other timers are unref'd).
   */
  flush(timeoutMs: number, keepAlive = false): Promise<boolean> {
    const target = this.seq;
    if (this.settledThrough(target)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: FlushWaiter = {
        target,
        resolve,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          resolve(false);
        }, timeoutMs),
      };
      if (!keepAlive) waiter.timer.unref?.();
      this.waiters.push(waiter);
      this.wake(0);
    });
  }

  /** Flushes (up to `timeoutMs`), then stops: later items are counted as dropped. Idempotent. */
  async shutdown(timeoutMs: number): Promise<boolean> {
    if (this.stopped) return this.pendingCount() === 0;
    // an awaited shutdown keeps the process alive until its traces are sent or the timeout passes
    const settled = await this.flush(timeoutMs, true);
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    return settled;
  }

  private enqueue(kind: Item["kind"], payload: WireTrace | WireFeedback): void {
    if (this.stopped) {
      this.counts.dropped++;
      return;
    }
    const evicted = this.queue.push({ kind, seq: ++this.seq, payload, attempts: 0 });
    if (evicted) {
      this.counts.dropped++;
      this.warn("overflow", `buffer full (${this.options.maxQueueSize} items): dropping the oldest`);
    }
    this.wake(this.queue.size >= this.options.maxBatchSize ? 0 : this.options.flushIntervalMs);
  }

  /** Makes sure a pump runs within `delayMs` (never before the current backoff ends). */
  private wake(delayMs: number): void {
    if (this.pumping || this.stopped) return;
    const at = Math.max(Date.now() + delayMs, this.backoffUntil);
    if (this.timer && this.timerAt <= at) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.pump();
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref?.();
  }

  /** Sends batches back to back until nothing is left or a failure asks for a backoff. */
  private async pump(): Promise<void> {
    if (this.pumping || this.stopped) return;
    this.pumping = true;
    try {
      while (Date.now() >= this.backoffUntil) {
        const batch = this.nextBatch();
        if (!batch) break;
        this.inFlight = batch;
        await this.send(batch);
        this.inFlight = undefined;
        this.settleWaiters();
      }
    } finally {
      this.pumping = false;
      this.inFlight = undefined;
      this.settleWaiters();
      if (this.pendingCount() > 0) this.wake(this.waiters.length > 0 ? 0 : this.options.flushIntervalMs);
    }
  }

  /** The next request's items: a split half, a single feedback, or consecutive traces within the size limits. */
  private nextBatch(): Item[] | undefined {
    const split = this.splits.pop();
    if (split) return split;
    const batch: Item[] = [];
    let bytes = 0;
    const traceIds = new Set<string>();
    while (batch.length < this.options.maxBatchSize) {
      const next = this.queue.peek();
      if (!next) break;
      if (!this.serialize(next)) {
        this.queue.shift();
        continue;
      }
      if (next.kind === "feedback") {
        if (batch.length === 0) batch.push(this.queue.shift()!);
        break;
      }
      // A trace re-sent with late steps must not share a batch with itself: the server rejects duplicate ids.
      const id = (next.payload as WireTrace).id;
      const size = next.json!.length;
      if (batch.length > 0 && (bytes + size > this.options.maxBatchBytes || traceIds.has(id))) break;
      batch.push(this.queue.shift()!);
      bytes += size;
      traceIds.add(id);
    }
    return batch.length > 0 ? batch : undefined;
  }

  private serialize(item: Item): boolean {
    if (item.json !== undefined) return true;
    const json = safeStringify(item.payload);
    if (json === undefined) {
      this.counts.failed++;
      this.warn("serialize", `a ${item.kind} could not be turned into JSON and was dropped`);
      return false;
    }
    item.json = json;
    return true;
  }

  private async send(batch: Item[]): Promise<void> {
    const kind = batch[0]!.kind;
    const url = `${this.options.baseUrl}/v1/${kind === "trace" ? "traces" : "feedback"}`;
    const body = kind === "trace" ? `{"traces":[${batch.map((i) => i.json).join(",")}]}` : batch[0]!.json!;
    let status: number;
    let retryAfter: number | undefined;
    let detail: string;
    try {
      const signal = AbortSignal.timeout(this.options.requestTimeoutMs);
      // The race also bounds an injected fetch that ignores its signal: one stuck request must not stall export.
      const response = await Promise.race([
        this.options.fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${this.options.apiKey}` },
          body,
          signal,
        }),
        new Promise<never>((_, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
        ),
      ]);
      detail = await response.text().catch(() => "");
      if (response.ok) {
        this.counts.sent += batch.length;
        this.consecutiveFailures = 0;
        return;
      }
      status = response.status;
      retryAfter = retryAfterMs(response.headers.get("retry-after"));
    } catch (error) {
      this.retry(batch, isTimeout(error), undefined, `${url} unreachable (${String(error)})`);
      return;
    }
    const outcome = classify(kind, status);
    const reason = `${url} answered ${status}: ${detail.slice(0, 300)}`;
    if (outcome === "retry" || outcome === "retry-counted") {
      this.retry(batch, outcome === "retry-counted", retryAfter, reason);
    } else if (outcome === "split" && batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      this.splits.push(batch.slice(half), batch.slice(0, half));
    } else {
      this.counts.failed += batch.length;
      this.warn(`rejected-${status}`, `${reason} — ${batch.length} ${kind}(s) dropped, not retried`);
    }
  }

  /** Puts a failed batch back in front of the queue (its items are the oldest) and starts a backoff. */
  private retry(batch: Item[], counted: boolean, retryAfter: number | undefined, reason: string): void {
    this.consecutiveFailures++;
    this.counts.retried++;
    let gaveUp = 0;
    for (let i = batch.length - 1; i >= 0; i--) {
      const item = batch[i]!;
      if (counted) item.attempts++;
      if (item.attempts > this.options.maxRetries) gaveUp++;
      else if (!this.queue.unshift(item)) this.counts.dropped++;
    }
    this.counts.failed += gaveUp;
    const delay = backoffDelay(
      this.consecutiveFailures,
      this.options.initialBackoffMs,
      this.options.maxBackoffMs,
    );
    this.backoffUntil = Date.now() + Math.max(delay, Math.min(retryAfter ?? 0, 60_000));
    this.warn("retry", `${reason} — will retry${gaveUp > 0 ? `; gave up on ${gaveUp} after retries` : ""}`);
  }

  private pendingCount(): number {
    let n = this.queue.size + (this.inFlight?.length ?? 0);
    for (const split of this.splits) n += split.length;
    return n;
  }

  /** True when no item with a sequence number up to `target` is still waiting or in flight. */
  private settledThrough(target: number): boolean {
    let oldest = this.queue.peek()?.seq ?? Number.POSITIVE_INFINITY;
    for (const batch of [this.inFlight ?? [], ...this.splits]) {
      for (const item of batch) oldest = Math.min(oldest, item.seq);
    }
    return oldest > target;
  }

  private settleWaiters(): void {
    if (this.waiters.length === 0) return;
    this.waiters = this.waiters.filter((waiter) => {
      if (!this.settledThrough(waiter.target)) return true;
      clearTimeout(waiter.timer);
      waiter.resolve(true);
      return false;
    });
  }

  /** Reports a problem at most once a minute per kind, so an outage does not flood the agent's logs. */
  private warn(key: string, message: string): void {
    const now = Date.now();
    if (now - (this.lastWarned.get(key) ?? Number.NEGATIVE_INFINITY) < 60_000) return;
    this.lastWarned.set(key, now);
    try {
      this.options.warn(`[arc] ${message}`);
    } catch {
      // A failing logger must not break export.
    }
  }
}
