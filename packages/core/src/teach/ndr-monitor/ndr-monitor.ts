import { z } from "zod";
import { InvalidInputError } from "../../errors/index.ts";
import { toInvalidInputError } from "../../trace/index.ts";
import { wilsonInterval } from "./wilson-interval.ts";

/** How the live NDR monitor decides to switch teaching off for a pattern. */
export const NdrMonitorConfig = z
  .object({
    gate: z
      .number()
      .gt(0, "must be in (0, 1]")
      .max(1, "must be in (0, 1]")
      .default(0.99)
      .describe("Lowest acceptable Non-Degradation Rate of a pattern under teaching."),
    minSamples: z
      .number()
      .int("must be an integer")
      .positive("must be positive")
      .default(20)
      .describe("Outcomes with a baseline needed before any decision; fewer keep teaching on."),
    window: z
      .number()
      .int("must be an integer")
      .positive("must be positive")
      .default(500)
      .describe(
        "Only the latest this many outcomes count, so old behaviour ages out (a new teacher, a new student).",
      ),
    z: z
      .number()
      .positive("must be positive")
      .default(1.96)
      .describe("Normal quantile of the Wilson interval: 1.96 is 95% two-sided confidence."),
    bound: z
      .enum(["upper", "lower"])
      .default("upper")
      .describe(
        "'upper': switch off once the NDR is confidently below the gate (upper bound < gate); " +
          "'lower': switch off unless it is confidently at or above it (lower bound < gate), far stricter.",
      ),
  })
  .strict()
  .refine((c) => c.minSamples <= c.window, {
    message: "minSamples must not exceed window, or no decision could ever be made",
    path: ["minSamples"],
  });
/** Validated monitor config. */
export type NdrMonitorConfig = z.infer<typeof NdrMonitorConfig>;
/** Monitor config as written; omitted fields take the defaults. */
export type NdrMonitorConfigInput = z.input<typeof NdrMonitorConfig>;

/** The monitor's current view of one pattern. */
export interface NdrDecision {
  /** The pattern the decision is about. */
  patternId: string;
  /** Outcomes in the window. */
  samples: number;
  /** Outcomes in the window whose taught score is below the baseline. */
  degradations: number;
  /** Raw NDR of the window; null without samples. */
  ndr: number | null;
  /** Wilson interval of the window's NDR. */
  /** Lower Wilson bound of the window's NDR. */
  lower: number;
  /** Upper Wilson bound of the window's NDR. */
  upper: number;
  /** Whether the pattern may still be taught. */
  teaching: boolean;
  /** Why, in words an operator reads. */
  reason: string;
}

interface PatternState {
  /** Ring buffer of the window: true = not degraded. */
  outcomes: boolean[];
  next: number;
  degradations: number;
  /** The decision that switched teaching off; set once and kept until reset. */
  switchedOff?: NdrDecision;
}

/**
 * Watches the Non-Degradation Rate of each pattern live and switches teaching off for a pattern
 * whose NDR falls below its gate. Decisions use a Wilson bound over a sliding window, not the raw
 * ratio, so one unlucky degradation in a small sample does not switch teaching off and a real
 * problem is not hidden by noise. Switching off latches until `reset` (an operator decision),
 * so a pattern does not flap on and off. Key patterns per tenant (e.g. `tenant/pattern`) when
 * ids are not global.
 */
export class NdrMonitor {
  /** The validated config, defaults filled in. */
  readonly config: NdrMonitorConfig;
  private readonly patterns = new Map<string, PatternState>();

  constructor(config: NdrMonitorConfigInput = {}) {
    const parsed = NdrMonitorConfig.safeParse(config);
    if (!parsed.success) throw toInvalidInputError(parsed.error, "ndrMonitor");
    this.config = parsed.data;
  }

  /**
   * Adds one outcome of a pattern and returns the pattern's decision. Outcomes without a
   * baseline score cannot show degradation and are ignored.
   */
  record(patternId: string, outcome: { taughtScore: number; baselineScore?: number }): NdrDecision {
    if (outcome.baselineScore === undefined) return this.decision(patternId);
    for (const [field, value] of [
      ["taughtScore", outcome.taughtScore],
      ["baselineScore", outcome.baselineScore],
    ] as const)
      if (!(value >= 0 && value <= 1))
        throw new InvalidInputError(`${field}: expected a score in [0, 1], got ${value}`, { field });
    const state = this.stateOf(patternId);
    const kept = outcome.taughtScore >= outcome.baselineScore;
    if (state.outcomes.length < this.config.window) state.outcomes.push(kept);
    else {
      if (!state.outcomes[state.next]) state.degradations -= 1;
      state.outcomes[state.next] = kept;
      state.next = (state.next + 1) % this.config.window;
    }
    if (!kept) state.degradations += 1;
    const decision = this.decide(patternId, state);
    if (!decision.teaching && !state.switchedOff) state.switchedOff = decision;
    return decision;
  }

  /** The pattern's current decision; an unseen pattern may be taught. */
  decision(patternId: string): NdrDecision {
    return this.decide(patternId, this.patterns.get(patternId) ?? { outcomes: [], next: 0, degradations: 0 });
  }

  /** Whether the gateway may put this pattern's traffic under a teacher. */
  shouldTeach(patternId: string): boolean {
    return this.decision(patternId).teaching;
  }

  /** Clears a pattern's history and switches its teaching back on (after a new teacher or fix). */
  reset(patternId: string): void {
    this.patterns.delete(patternId);
  }

  /** Decisions of every pattern seen, e.g. for the API and CLI. */
  decisions(): NdrDecision[] {
    return [...this.patterns.keys()].map((id) => this.decision(id));
  }

  private stateOf(patternId: string): PatternState {
    let state = this.patterns.get(patternId);
    if (!state) {
      state = { outcomes: [], next: 0, degradations: 0 };
      this.patterns.set(patternId, state);
    }
    return state;
  }

  private decide(patternId: string, state: PatternState): NdrDecision {
    const { gate, minSamples, z, bound } = this.config;
    const samples = state.outcomes.length;
    const { lower, upper } = wilsonInterval(samples - state.degradations, samples, z);
    const stats = {
      patternId,
      samples,
      degradations: state.degradations,
      ndr: samples === 0 ? null : (samples - state.degradations) / samples,
      lower,
      upper,
    };
    if (state.switchedOff)
      return { ...stats, teaching: false, reason: `switched off earlier: ${state.switchedOff.reason}` };
    if (samples < minSamples)
      return {
        ...stats,
        teaching: true,
        reason: `${samples} of ${minSamples} samples needed before deciding`,
      };
    const value = bound === "upper" ? upper : lower;
    const shown = `${bound} bound ${value.toFixed(4)} of NDR ${stats.ndr!.toFixed(4)} over ${samples} samples`;
    return value < gate
      ? { ...stats, teaching: false, reason: `${shown} is below the gate ${gate}` }
      : { ...stats, teaching: true, reason: `${shown} meets the gate ${gate}` };
  }
}
