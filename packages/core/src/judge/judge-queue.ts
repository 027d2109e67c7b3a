import { type JudgeClient, JudgeEndpointError } from "./judge-client.ts";

/** How one judge's calls are queued; every field has a default. */
export interface JudgeQueueLimits {
  /** Calls sent to the judge at once (default 1: a judge served on CPUs answers its health checks between calls). */
  concurrency: number;
  /**
   * Calls that may wait for a slot (default 64): past it a background call (detection) is refused at once.
   * Foreground calls (validation, calibration, training), whose callers bound their own numbers, wait ahead of them.
   */
  maxWaiting: number;
  /** A call's deadline from when it is queued, its wait and its retries included (default 30 s). */
  deadlineMs: number;
  /** Tries after the first for a transient failure (no connection, HTTP 429 or 5xx, a time-out); default 2. */
  retries: number;
  /** The wait before the first retry, doubled for each next one, drawn between half and 1.5 times (default 250 ms). */
  backoffMs: number;
}

/** Which calls wait first: foreground ones (a person or a run waits for them) before background ones (detection). */
export type JudgePriority = "foreground" | "background";

/** Why a queued judge call was not made: the queue was full, or its deadline came before a slot or an answer. */
export class JudgeQueueRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JudgeQueueRefusal";
  }
}

/** What a queue holds now, and the most calls it ever had in flight. */
export interface JudgeQueueStats {
  inFlight: number;
  waiting: number;
  peakInFlight: number;
  peakWaiting: number;
  /** Calls refused because the queue was full, or given up at their deadline. */
  refused: number;
  /** Attempts tried again after a transient failure. */
  retried: number;
}

interface Waiter {
  priority: JudgePriority;
  start: () => void;
  timer?: NodeJS.Timeout;
}

const DEFAULT_LIMITS: JudgeQueueLimits = {
  concurrency: 1,
  maxWaiting: 64,
  deadlineMs: 30_000,
  retries: 2,
  backoffMs: 250,
};

/**
 * One judge's calls, whoever makes them: at most `concurrency` in flight, at most `maxWaiting` waiting (foreground
 * first), each ended by its deadline, and a transient failure tried again after a growing, jittered back-off. A
 * judge endpoint thereby sees a bounded load however many traces wait for it, and `pressure()` tells detection
 * when to stop sending.
 */
export class JudgeQueue {
  readonly limits: JudgeQueueLimits;
  private inFlight = 0;
  private readonly waiting: Waiter[] = [];
  private readonly counts = { peakInFlight: 0, peakWaiting: 0, refused: 0, retried: 0 };

  constructor(
    /** The judge, as messages name it (its model and endpoint). */
    readonly name: string,
    limits: Partial<JudgeQueueLimits> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    for (const [key, value] of Object.entries(this.limits))
      if (!(Number.isFinite(value) && value >= (key === "retries" || key === "maxWaiting" ? 0 : 1)))
        throw new RangeError(`judge queue ${key}: expected a positive number, got ${value}`);
  }

  stats(): JudgeQueueStats {
    return { inFlight: this.inFlight, waiting: this.waiting.length, ...this.counts };
  }

  /** Why a background call would be refused now (the queue is full), or undefined when it would be queued. */
  pressure(): string | undefined {
    if (this.waiting.length < this.limits.maxWaiting) return undefined;
    return `the judge ${this.name} is busy: ${this.waiting.length} calls wait and ${this.inFlight} are in flight (at most ${this.limits.maxWaiting} wait)`;
  }

  /**
   * Runs `send` in a slot before `deadline` (ms since the epoch; at most `deadlineMs` from now), trying a
   * transient failure again while the deadline allows. Throws `JudgeQueueRefusal` when the queue is full (a
   * background call) or the deadline comes first, else the call's own error.
   */
  async run<T>(
    send: (signal: AbortSignal) => Promise<T>,
    options: { priority?: JudgePriority; deadline?: number } = {},
  ): Promise<T> {
    const priority = options.priority ?? "foreground";
    const deadline = Math.min(
      options.deadline ?? Number.POSITIVE_INFINITY,
      this.now() + this.limits.deadlineMs,
    );
    if (priority === "background") {
      const busy = this.pressure();
      if (busy) {
        this.counts.refused++;
        throw new JudgeQueueRefusal(busy);
      }
    }
    for (let attempt = 0; ; attempt++) {
      await this.slot(priority, deadline);
      let failure: unknown;
      try {
        const left = deadline - this.now();
        if (left <= 0) throw this.late(deadline);
        return await send(AbortSignal.timeout(left));
      } catch (error) {
        failure = error;
      } finally {
        this.release();
      }
      const backoff = this.limits.backoffMs * 2 ** attempt * (0.5 + Math.random());
      const transient = failure instanceof JudgeEndpointError && failure.transient;
      if (!transient || attempt >= this.limits.retries) throw failure;
      if (this.now() + backoff >= deadline) {
        this.counts.refused++;
        throw new JudgeQueueRefusal(
          `${(failure as Error).message}; no time for another try before its deadline`,
        );
      }
      this.counts.retried++;
      await new Promise((resolve) => setTimeout(resolve, backoff));
    }
  }

  /** A client whose calls go through this queue at `priority`, each by the request's deadline if it has one. */
  client(inner: JudgeClient, priority: JudgePriority): JudgeClient {
    return {
      complete: (request) =>
        this.run((signal) => inner.complete({ ...request, signal }), {
          priority,
          ...(request.deadline !== undefined ? { deadline: request.deadline } : {}),
        }),
    };
  }

  private late(deadline: number): JudgeQueueRefusal {
    this.counts.refused++;
    return new JudgeQueueRefusal(
      `the judge ${this.name} gave no answer by the call's deadline (${Math.max(0, Math.round(deadline - this.now()))} ms left; ${this.waiting.length} calls wait, ${this.inFlight} in flight)`,
    );
  }

  /** Resolves when the call may be sent (a slot is held), or rejects at its deadline. */
  private slot(priority: JudgePriority, deadline: number): Promise<void> {
    if (this.inFlight < this.limits.concurrency && this.waiting.length === 0) {
      this.take();
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        priority,
        start: () => {
          clearTimeout(waiter.timer);
          this.take();
          resolve();
        },
      };
      waiter.timer = setTimeout(
        () => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(this.late(deadline));
        },
        Math.max(0, deadline - this.now()),
      );
      // foreground calls wait ahead of every background one, each kind in arrival order
      const at = priority === "foreground" ? this.waiting.findIndex((w) => w.priority === "background") : -1;
      if (at >= 0) this.waiting.splice(at, 0, waiter);
      else this.waiting.push(waiter);
      this.counts.peakWaiting = Math.max(this.counts.peakWaiting, this.waiting.length);
    });
  }

  private take(): void {
    this.inFlight++;
    this.counts.peakInFlight = Math.max(this.counts.peakInFlight, this.inFlight);
  }

  private release(): void {
    this.inFlight--;
    const next = this.waiting.shift();
    next?.start();
  }
}
