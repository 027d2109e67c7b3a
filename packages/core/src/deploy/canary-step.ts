import type { CanaryPolicy } from "./canary-policy.ts";
import { type ArmCounts, canarySprt, type SprtResult } from "./canary-sprt.ts";

/** Where a canary stands: which ramp stage, with the live counts gathered since that stage began. */
export interface CanaryState {
  stage: number;
  canary: ArmCounts;
  control: ArmCounts;
}

/** What the deployer should do next, why, and the figures it decided on (they go to the audit log). */
export interface CanaryStep {
  action: "hold" | "advance" | "promote" | "rollback";
  /** The canary's traffic share after the step. */
  share: number;
  reason: string;
  evidence: { stage: number; canary: ArmCounts; control: ArmCounts; sprt: SprtResult };
}

const pct = (c: ArmCounts) => (c.n === 0 ? "n/a" : `${((c.failures / c.n) * 100).toFixed(1)}%`);

/**
 * The ramp's state machine: roll back as soon as the sequential test says the canary is worse than the control;
 * advance to the next share (or promote, when the next share is 100%) once the stage has its minimum samples on both
 * arms and the test says "not worse"; otherwise hold. A rollback needs only the test: a real regression is not kept
 * in front of users to fill a quota.
 */
export function decideCanaryStep(state: CanaryState, policy: CanaryPolicy): CanaryStep {
  const share = policy.ramp[state.stage];
  if (share === undefined)
    throw new RangeError(`stage: expected 0..${policy.ramp.length - 1}, got ${state.stage}`);
  const sprt = canarySprt(state.canary, state.control, policy);
  const evidence = { stage: state.stage, canary: state.canary, control: state.control, sprt };
  const rates = `canary ${pct(state.canary)} of ${state.canary.n}, control ${pct(state.control)} of ${state.control.n}`;
  if (sprt.decision === "worse" && state.control.n >= policy.minControlSamples) {
    return {
      action: "rollback",
      share: 0,
      reason: `canary significantly worse (${rates}; SPRT llr ${sprt.llr.toFixed(2)} >= ${sprt.upper.toFixed(2)})`,
      evidence,
    };
  }
  const enough = state.canary.n >= policy.minSamplesPerStage && state.control.n >= policy.minControlSamples;
  if (enough && sprt.decision === "not_worse") {
    const next = policy.ramp[state.stage + 1];
    const last = next === undefined || next >= 1;
    return {
      action: last ? "promote" : "advance",
      share: last ? 1 : next,
      reason: `canary not worse at ${Math.round(share * 100)}% (${rates}; SPRT llr ${sprt.llr.toFixed(2)} <= ${sprt.lower.toFixed(2)})`,
      evidence,
    };
  }
  return {
    action: "hold",
    share,
    reason: `gathering evidence at ${Math.round(share * 100)}% (${rates}; need ${policy.minSamplesPerStage} canary and ${policy.minControlSamples} control samples and a decisive SPRT)`,
    evidence,
  };
}
