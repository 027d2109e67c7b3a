/** What a tenant's judge may spend in any minute; past it, traces wait (verdict `unknown`) and are judged later. */
export interface JudgeBudget {
  callsPerMinute: number;
  tokensPerMinute: number;
}

/** The calls and tokens spent in the last minute, and whether one more call fits the budget. */
export class MinuteWindow {
  private readonly spent: { at: number; tokens: number }[] = [];

  constructor(
    private readonly budget: JudgeBudget,
    private readonly now: () => number,
  ) {}

  /** Why a call does not fit now, or undefined when it does. */
  refusal(): string | undefined {
    const since = this.now() - 60_000;
    while (this.spent.length > 0 && this.spent[0].at <= since) this.spent.shift();
    const tokens = this.spent.reduce((n, s) => n + s.tokens, 0);
    if (this.spent.length >= this.budget.callsPerMinute)
      return `${this.spent.length} judge calls in the last minute (budget ${this.budget.callsPerMinute})`;
    if (tokens >= this.budget.tokensPerMinute)
      return `${tokens} judge tokens in the last minute (budget ${this.budget.tokensPerMinute})`;
    return undefined;
  }

  /** Takes a call's place in the window now, before it is sent, so calls made at once cannot overrun the budget. */
  reserve(): { tokens: number } {
    const entry = { at: this.now(), tokens: 0 };
    this.spent.push(entry);
    return entry;
  }

  /** Gives back a reserved place whose call was never sent (its queue refused it). */
  cancel(entry: { tokens: number }): void {
    const at = this.spent.indexOf(entry as { at: number; tokens: number });
    if (at >= 0) this.spent.splice(at, 1);
  }
}

/** A judge's spending window: the one it shares with the tenant's other judges, else its own for `budget` (none: unbounded). */
export function judgeWindow(options: {
  window?: MinuteWindow;
  budget?: JudgeBudget;
  now?: () => number;
}): MinuteWindow {
  return (
    options.window ??
    new MinuteWindow(
      options.budget ?? {
        callsPerMinute: Number.POSITIVE_INFINITY,
        tokensPerMinute: Number.POSITIVE_INFINITY,
      },
      options.now ?? Date.now,
    )
  );
}
