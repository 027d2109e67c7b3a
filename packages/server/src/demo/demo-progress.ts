import type { DemoOptions } from "./demo-options.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A phase of the demo and what it did. */
export interface DemoPhase {
  name: string;
  startS: number;
  endS: number;
  note: string;
}

/** One line that rewrites itself on a TTY and prints every few seconds elsewhere. */
export class LiveLine {
  private last = 0;
  constructor(private readonly out: DemoOptions["out"]) {}
  update(text: string): void {
    if (this.out.isTTY) this.out.write(`\r\x1b[2K${text}`);
    else if (Date.now() - this.last > 5000) {
      this.last = Date.now();
      this.out.write(`${text}\n`);
    }
  }
  done(text: string): void {
    this.out.write(this.out.isTTY ? `\r\x1b[2K${text}\n` : `${text}\n`);
    this.last = 0;
  }
}

/** The demo's clock and its record of phases and notes, with the progress output. */
export class DemoProgress {
  readonly phases: DemoPhase[] = [];
  readonly notes: string[] = [];
  private phaseStart = 0;

  constructor(
    readonly began: number,
    readonly budgetMs: number,
    readonly live: LiveLine,
    private readonly out: DemoOptions["out"],
  ) {}

  /** The time (ms since the epoch) at this share of the budget. */
  at(share: number): number {
    return this.began + this.budgetMs * share;
  }

  /** Seconds since the demo began. */
  elapsed(): number {
    return (Date.now() - this.began) / 1000;
  }

  /** Prints a line that stays. */
  say(line: string): void {
    this.out.write(`${line}\n`);
  }

  /** Ends the current phase: records it and prints `✓ name (seconds): note`. */
  endPhase(name: string, note: string): void {
    const now = this.elapsed();
    this.phases.push({ name, startS: this.phaseStart, endS: now, note });
    this.live.done(`✓ ${name} (${(now - this.phaseStart).toFixed(0)} s): ${note}`);
    this.phaseStart = now;
  }
}
