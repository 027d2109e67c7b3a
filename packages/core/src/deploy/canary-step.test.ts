import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CanaryPolicy } from "./canary-policy.ts";
import { type CanaryStep, decideCanaryStep } from "./canary-step.ts";

const policy = CanaryPolicy.parse({});

describe("decideCanaryStep", () => {
  it("holds a stage until it has its minimum samples", () => {
    const step = decideCanaryStep(
      { stage: 0, stageMinutes: 1, canary: { n: 5, failures: 0 }, control: { n: 50, failures: 5 } },
      policy,
    );
    assert.equal(step.action, "hold");
    assert.equal(step.share, 0.1);
  });

  it("advances from 10% to 50% when the canary is not worse with enough samples", () => {
    const step = decideCanaryStep(
      { stage: 0, stageMinutes: 1, canary: { n: 40, failures: 2 }, control: { n: 300, failures: 30 } },
      policy,
    );
    assert.equal(step.action, "advance");
    assert.equal(step.share, 0.5);
  });

  it("promotes from the last stage before 100%", () => {
    const step = decideCanaryStep(
      { stage: 1, stageMinutes: 1, canary: { n: 60, failures: 3 }, control: { n: 60, failures: 6 } },
      policy,
    );
    assert.equal(step.action, "promote");
    assert.equal(step.share, 1);
  });

  it("rolls back a canary that fails far more than the control, before the stage minimum", () => {
    const step = decideCanaryStep(
      { stage: 0, stageMinutes: 1, canary: { n: 12, failures: 10 }, control: { n: 100, failures: 10 } },
      policy,
    );
    assert.equal(step.action, "rollback");
    assert.equal(step.share, 0);
    assert.match(step.reason, /significantly worse/);
  });

  it("does not roll back on a control too small to trust", () => {
    const step = decideCanaryStep(
      { stage: 0, stageMinutes: 1, canary: { n: 12, failures: 10 }, control: { n: 3, failures: 0 } },
      policy,
    );
    assert.equal(step.action, "hold");
  });

  it("never calls a canary worse when it fails no more often than the control", () => {
    const step = decideCanaryStep(
      { stage: 0, stageMinutes: 5, canary: { n: 150, failures: 150 }, control: { n: 25, failures: 25 } },
      policy,
    );
    assert.equal(step.action, "hold");
  });

  it("ends a canary whose arms both fail every request by keeping production at the sample bound", () => {
    const steps = runCanary(1, 1, 9);
    const last = steps.at(-1);
    assert.equal(last?.action, "keep_production");
    assert.equal(last?.share, 0);
    assert.equal(last?.evidence.truncated, "samples");
    assert.equal(last?.evidence.canary.n, policy.maxSamplesPerStage);
    assert.match(last?.reason ?? "", /without a difference shown; production kept/);
  });

  it("ends every canary within the bound, whatever failure rates the arms share", () => {
    for (const p of [0, 0.05, 0.3, 0.5, 0.7, 0.9, 0.97, 1]) {
      for (const seed of [1, 2, 3]) {
        const steps = runCanary(p, p, 1, seed);
        const end = steps.at(-1)?.action;
        assert.ok(
          end === "promote" || end === "rollback" || end === "keep_production",
          `rate ${p}, seed ${seed}: ended with ${end}`,
        );
        assert.ok(
          steps.length <= policy.ramp.length * policy.maxSamplesPerStage,
          `rate ${p}: ${steps.length} looks`,
        );
      }
    }
  });

  it("rolls back at the bound a canary that leans worse without a decisive test", () => {
    const step = decideCanaryStep(
      { stage: 0, stageMinutes: 10, canary: { n: 200, failures: 110 }, control: { n: 30, failures: 14 } },
      policy,
    );
    assert.equal(step.action, "rollback");
    assert.equal(step.evidence.truncated, "samples");
    assert.match(step.reason, /bound of 200 canary samples undecided/);
  });

  it("ends a stage that gathers few requests after maxStageMinutes", () => {
    const held = decideCanaryStep(
      { stage: 0, stageMinutes: 60, canary: { n: 4, failures: 2 }, control: { n: 30, failures: 15 } },
      policy,
    );
    assert.equal(held.action, "hold");
    const ended = decideCanaryStep(
      { stage: 0, stageMinutes: 24 * 60, canary: { n: 4, failures: 2 }, control: { n: 30, failures: 15 } },
      policy,
    );
    assert.equal(ended.action, "keep_production");
    assert.equal(ended.evidence.truncated, "time");
  });

  it("rejects a sample bound below the stage minimum", () => {
    assert.throws(
      () => CanaryPolicy.parse({ minSamplesPerStage: 50, maxSamplesPerStage: 40 }),
      /maxSamplesPerStage must be at least minSamplesPerStage/,
    );
  });

  it("rejects a ramp that does not end at 100%", () => {
    assert.throws(() => CanaryPolicy.parse({ ramp: [0.1, 0.5] }), /end at 1/);
  });
});

/**
 * Drives the state machine one canary request at a time (with `controlPerCanary` control requests beside each), the
 * arms failing at the given rates from a seeded generator, until the canary ends; returns every step taken.
 */
function runCanary(
  canaryRate: number,
  controlRate: number,
  controlPerCanary: number,
  seed = 1,
): CanaryStep[] {
  let state = seed;
  const random = () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
  const steps: CanaryStep[] = [];
  let stage = 0;
  let canary = { n: 0, failures: 0 };
  let control = { n: 0, failures: 0 };
  for (;;) {
    canary = { n: canary.n + 1, failures: canary.failures + (random() < canaryRate ? 1 : 0) };
    for (let i = 0; i < controlPerCanary; i++)
      control = { n: control.n + 1, failures: control.failures + (random() < controlRate ? 1 : 0) };
    const step = decideCanaryStep({ stage, stageMinutes: 1, canary, control }, policy);
    steps.push(step);
    if (step.action === "advance") {
      stage += 1;
      canary = { n: 0, failures: 0 };
      control = { n: 0, failures: 0 };
    } else if (step.action !== "hold") return steps;
  }
}
