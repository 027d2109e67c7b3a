/**
 * Runs `tick` every `intervalMs`, one run at a time (a slow tick delays the next instead of overlapping it);
 * errors are reported and the loop goes on, so one bad tenant does not stop every deployment.
 */
export class PeriodicWorker {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> = Promise.resolve();
  private stopped = true;

  constructor(
    name: string,
    private readonly tick: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void = (error) => console.error(`${name}:`, error),
  ) {}

  /** Starts the loop (the first tick runs at once). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops the loop and waits for a tick in progress to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current;
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.current = this.tick()
        .catch((error) => this.onError(error))
        .finally(() => {
          if (!this.stopped) this.schedule(this.intervalMs);
        });
    }, delay);
  }
}
