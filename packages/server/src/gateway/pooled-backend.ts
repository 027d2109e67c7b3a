import { isWholeBody, type ModelAnswer, relayStream } from "./model-answer.ts";
import type { ModelBackend } from "./model-backend.ts";

/** A backend as made: what answers, and what frees it (an engine's weights, an adapter on its upstream). */
export interface LoadedBackend {
  backend: ModelBackend;
  close(): Promise<void>;
}

/** What a pooled backend asks of its pool. */
export interface BackendKeeper {
  /** Called at each use of a backend that holds weights in this process: it is now the most recently used. */
  used(handle: PooledBackend): void;
  /** Called when a close fails (it is not retried; the backend is made again at its next use). */
  closeFailed(handle: PooledBackend, error: unknown): void;
}

/**
 * Calls `done` once, when the answer's body has been read to its end, failed, or been stopped (a client that went
 * away); at once for a whole body.
 */
export function onBodyEnd(answer: ModelAnswer, done: () => void): ModelAnswer {
  if (isWholeBody(answer.body)) {
    done();
    return answer;
  }
  const end = () => {
    done();
    return undefined;
  };
  return { ...answer, body: relayStream(answer.body, { end, stop: done }) };
}

/**
 * One model version's backend as the pool hands it out: made at first use, and closeable while the handle lives on.
 * It counts the calls in flight (until their response bodies end), so that a backend the pool lets go of is closed
 * only once its last call ends; a call after that makes it again.
 */
export class PooledBackend implements ModelBackend {
  private loaded: Promise<LoadedBackend> | null = null;
  private running = 0;
  /** Close when the last call in flight ends (set by `release`; cleared by a new call). */
  private closeWhenIdle = false;
  /** Out of service for good: closed whenever its calls in flight end. */
  private retired = false;

  constructor(
    /** The model version it serves. */
    readonly versionId: string,
    /** Whether it holds weights in this process, and so counts against the pool's bound. */
    readonly inProcess: boolean,
    /** Whether closing it frees anything (weights, an adapter): only then are its calls counted until they end. */
    private readonly closes: boolean,
    private readonly make: () => Promise<LoadedBackend>,
    private readonly keeper: BackendKeeper,
  ) {}

  /** `embedded` when it holds weights in this process, else `upstream`. */
  get kind(): ModelBackend["kind"] {
    return this.inProcess ? "embedded" : "upstream";
  }

  /** Whether it is made (and holds what it holds) now. */
  get isLoaded(): boolean {
    return this.loaded !== null;
  }

  /** Whether it is out of service for good. */
  get isRetired(): boolean {
    return this.retired;
  }

  /** Makes it now (loads the checkpoint or the adapter), so that a fault shows before traffic reaches it. */
  async warm(): Promise<void> {
    this.closeWhenIdle = false;
    await this.ensure();
    if (this.inProcess) this.keeper.used(this);
    // retired: closed again unless the caller starts its call at once
    if (this.retired) this.closeSoonIfIdle();
  }

  async chat(body: Record<string, unknown>, signal?: AbortSignal, cacheScope?: string): Promise<ModelAnswer> {
    // a plain upstream holds nothing here: its calls go straight through, off the count
    if (!this.closes) return (await this.ensure()).backend.chat(body, signal, cacheScope);
    this.running++;
    this.closeWhenIdle = false;
    let answer: ModelAnswer;
    try {
      const { backend } = await this.ensure();
      if (this.inProcess) this.keeper.used(this);
      answer = await backend.chat(body, signal, cacheScope);
    } catch (error) {
      this.ended();
      throw error;
    }
    return onBodyEnd(answer, () => this.ended());
  }

  /** Lets go of it: closed now when idle, else when its last call ends (unless a new call takes it up again). */
  release(): void {
    this.closeWhenIdle = true;
    this.closeSoonIfIdle();
  }

  /** Out of service for good: closed now when idle, else when its last call ends, and after any later call. */
  retire(): void {
    this.retired = true;
    this.closeSoonIfIdle();
  }

  private closeSoonIfIdle(): void {
    // after the current turn: a caller that has just been handed this backend starts its call first
    setImmediate(() => {
      if (this.shouldClose() && this.running === 0) void this.close();
    });
  }

  private shouldClose(): boolean {
    return this.retired || this.closeWhenIdle;
  }

  private ensure(): Promise<LoadedBackend> {
    if (!this.loaded) {
      const making = this.make();
      making.catch(() => {
        if (this.loaded === making) this.loaded = null;
      });
      this.loaded = making;
    }
    return this.loaded;
  }

  private ended(): void {
    this.running--;
    if (this.shouldClose() && this.running === 0) void this.close();
  }

  private async close(): Promise<void> {
    const loaded = this.loaded;
    this.loaded = null;
    this.closeWhenIdle = false;
    const made = await loaded?.catch(() => null);
    if (!made) return;
    try {
      await made.close();
    } catch (error) {
      this.keeper.closeFailed(this, error);
    }
  }
}
