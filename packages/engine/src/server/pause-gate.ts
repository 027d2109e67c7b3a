/** How SGLang's `POST /pause_generation` treats the generations in flight. */
export type PauseMode = "abort" | "retract" | "in_place";

/**
 * SGLang's pause and continue for the rollout routes: while paused, new generations wait (they are not refused);
 * `abort` also ends those in flight, which answer with what they have and finish reason `abort`. With `in_place` or
 * `retract` the ones in flight go on decoding: this server swaps weights between two decoding steps and records each
 * token's weight version, so a generation that spans an update is accounted for token by token.
 */
export class PauseGate {
  private paused: { done: Promise<void>; open: () => void } | null = null;
  private readonly running = new Set<AbortController>();

  get isPaused(): boolean {
    return this.paused !== null;
  }

  pause(mode: PauseMode): void {
    if (!this.paused) {
      let open!: () => void;
      const done = new Promise<void>((resolve) => {
        open = resolve;
      });
      this.paused = { done, open };
    }
    if (mode === "abort") for (const abort of this.running) abort.abort();
  }

  resume(): void {
    const paused = this.paused;
    this.paused = null;
    paused?.open();
  }

  /** Waits while paused, then counts a generation in (`abort` ends it on an aborting pause); returns its count-out. */
  async enter(abort: AbortController): Promise<() => void> {
    while (this.paused) await this.paused.done;
    this.running.add(abort);
    return () => {
      this.running.delete(abort);
    };
  }
}

/**
 * Lets a rollout request in: counts it (`admit`, 429 past the server's limit), waits while generation is paused, and
 * gives the signal that ends its generation when the client goes away or an aborting pause comes; `done` counts it out.
 */
export async function enterRollout(
  request: Request,
  admit: () => () => void,
  gate: PauseGate,
): Promise<{ signal: AbortSignal; done: () => void }> {
  const release = admit();
  const abort = new AbortController();
  if (request.signal.aborted) abort.abort();
  request.signal.addEventListener("abort", () => abort.abort(), { once: true });
  const leave = await gate.enter(abort);
  return {
    signal: abort.signal,
    done: () => {
      leave();
      release();
    },
  };
}
