import type { CanaryPolicy } from "./canary-policy.ts";
import { type ArmCounts, canarySprt, type SprtResult } from "./canary-sprt.ts";

/** Where a canary stands: which ramp stage, for how long, with the live counts gathered since that stage began. */
export interface CanaryState {
  stage: number;
  /** Minutes since the stage began; with `maxStageMinutes` it bounds a stage that gathers few requests. */
  stageMinutes: number;
  canary: ArmCounts;
  control: ArmCounts;
}

/**
 * What the deployer should do next, why, and the figures it decided on (they go to the audit log). `keep_production`
 * ends the canary with all traffic on the production model, as a rollback does, but says the stage reached its bound
 * without the canary showing a difference (both arms failing alike ends here), not that the canary was worse.
 */
export interface CanaryStep {
  action: "hold" | "advance" | "promote" | "rollback" | "keep_production";
  /** The canary's traffic share after the step. */
  share: number;
  reason: string;
  evidence: {
    stage: number;
    stageMinutes: number;
    canary: ArmCounts;
    control: ArmCounts;
    sprt: SprtResult;
    /** Set when the stage reached `maxSamplesPerStage` or `maxStageMinutes`: the truncation rule decided. */
    truncated?: "samples" | "time";
  };
}

const rate = (c: ArmCounts) => (c.n === 0 ? 0 : c.failures / c.n);
const pct = (c: ArmCounts) => (c.n === 0 ? "n/a" : `${(rate(c) * 100).toFixed(1)}%`);

/**
 * The ramp's state machine, a truncated sequential test per stage, so every canary ends:
 * 1. roll back as soon as Wald's SPRT says the canary is worse than the control and it fails more often than the
 *    control (a real regression is not kept in front of users to fill a quota; a canary that fails no more often than
 *    the control is never called worse);
 * 2. advance to the next share (or promote, when the next share is 100%) once the stage has its minimum samples on
 *    both arms and the SPRT says "not worse";
 * 3. at the stage's bound (`maxSamplesPerStage` judged canary requests, or `maxStageMinutes`) with no SPRT decision,
 *    the truncation rule ends the canary: roll back when the canary's failure rate exceeds the control's by at least
 *    half of `minDetectableIncrease` (it leans toward H1), otherwise keep production (no difference was shown, so the
 *    candidate is not promoted);
 * 4. otherwise hold.
 */
export function decideCanaryStep(state: CanaryState, policy: CanaryPolicy): CanaryStep {
  const share = policy.ramp[state.stage];
  if (share === undefined)
    throw new RangeError(`stage: expected 0..${policy.ramp.length - 1}, got ${state.stage}`);
  const sprt = canarySprt(state.canary, state.control, policy);
  const evidence = {
    stage: state.stage,
    stageMinutes: state.stageMinutes,
    canary: state.canary,
    control: state.control,
    sprt,
  };
  const rates = `canary ${pct(state.canary)} of ${state.canary.n}, control ${pct(state.control)} of ${state.control.n}`;
  const failsMore = rate(state.canary) > rate(state.control);
  if (sprt.decision === "worse" && failsMore && state.control.n >= policy.minControlSamples) {
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
  const truncated =
    state.canary.n >= policy.maxSamplesPerStage
      ? "samples"
      : state.stageMinutes >= policy.maxStageMinutes
        ? "time"
        : undefined;
  if (truncated) {
    const bound =
      truncated === "samples"
        ? `${policy.maxSamplesPerStage} canary samples`
        : `${policy.maxStageMinutes} minutes`;
    const margin = policy.minDetectableIncrease / 2;
    const leansWorse = rate(state.canary) - rate(state.control) >= margin;
    return leansWorse
      ? {
          action: "rollback",
          share: 0,
          reason: `stage reached its bound of ${bound} undecided and the canary fails at least ${(margin * 100).toFixed(1)} points more often (${rates})`,
          evidence: { ...evidence, truncated },
        }
      : {
          action: "keep_production",
          share: 0,
          reason: `stage reached its bound of ${bound} without a difference shown; production kept (${rates}; the canary would need to fail ${(margin * 100).toFixed(1)} points more often to count as worse)`,
          evidence: { ...evidence, truncated },
        };
  }
  return {
    action: "hold",
    share,
    reason: `gathering evidence at ${Math.round(share * 100)}% (${rates}; need ${policy.minSamplesPerStage} canary and ${policy.minControlSamples} control samples and a decisive SPRT, or the stage's bound of ${policy.maxSamplesPerStage} canary samples or ${policy.maxStageMinutes} minutes)`,
    evidence,
  };
}
