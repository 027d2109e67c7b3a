import type { CanaryPolicy } from "./canary-policy.ts";

/** Live counts of one arm: judged requests and how many of them failed. */
export interface ArmCounts {
  n: number;
  failures: number;
}

/** What the sequential test says so far. */
export interface SprtResult {
  decision: "worse" | "not_worse" | "continue";
  /** Log-likelihood ratio of H1 (canary worse by the increase) over H0 (canary as good as control). */
  llr: number;
  /** Crossing `upper` decides "worse", crossing `lower` decides "not worse". */
  upper: number;
  lower: number;
  /** The control failure rate H0 assumes, and the canary rate H1 assumes. */
  p0: number;
  p1: number;
}

/**
 * Wald's sequential probability ratio test of the canary's failures (a Bernoulli stream) between H0: p = p0, the
 * control's failure rate (Laplace-smoothed), and H1: p = p0 + minDetectableIncrease. With p0 known, Wald's bounds
 * hold however often it is looked at: alpha (about) bounds rolling back a good canary, beta passing a bad one. Here p0
 * is re-estimated from the control at each look, so those bounds are approximate: close when the control has many
 * more samples than the canary (the usual canary split), looser early on; `minControlSamples` guards the start.
 */
export function canarySprt(canary: ArmCounts, control: ArmCounts, policy: CanaryPolicy): SprtResult {
  const p0 = Math.min(0.98, Math.max(0.01, (control.failures + 1) / (control.n + 2)));
  const p1 = Math.min(0.995, p0 + policy.minDetectableIncrease);
  const llr =
    canary.failures * Math.log(p1 / p0) + (canary.n - canary.failures) * Math.log((1 - p1) / (1 - p0));
  const upper = Math.log((1 - policy.beta) / policy.alpha);
  const lower = Math.log(policy.beta / (1 - policy.alpha));
  const decision = llr >= upper ? "worse" : llr <= lower ? "not_worse" : "continue";
  return { decision, llr, upper, lower, p0, p1 };
}
