import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CanaryPolicy } from "./canary-policy.ts";
import { decideCanaryStep } from "./canary-step.ts";

const policy = CanaryPolicy.parse({});

describe("decideCanaryStep", () => {
  it("holds a stage until it has its minimum samples", () => {
    const step = decideCanaryStep(
      { stage: 0, canary: { n: 5, failures: 0 }, control: { n: 50, failures: 5 } },
      policy,
    );
    assert.equal(step.action, "hold");
    assert.equal(step.share, 0.1);
  });

  it("advances from 10% to 50% when the canary is not worse with enough samples", () => {
    const step = decideCanaryStep(
      { stage: 0, canary: { n: 40, failures: 2 }, control: { n: 300, failures: 30 } },
      policy,
    );
    assert.equal(step.action, "advance");
    assert.equal(step.share, 0.5);
  });

  it("promotes from the last stage before 100%", () => {
    const step = decideCanaryStep(
      { stage: 1, canary: { n: 60, failures: 3 }, control: { n: 60, failures: 6 } },
      policy,
    );
    assert.equal(step.action, "promote");
    assert.equal(step.share, 1);
  });

  it("rolls back a canary that fails far more than the control, before the stage minimum", () => {
    const step = decideCanaryStep(
      { stage: 0, canary: { n: 12, failures: 10 }, control: { n: 100, failures: 10 } },
      policy,
    );
    assert.equal(step.action, "rollback");
    assert.equal(step.share, 0);
    assert.match(step.reason, /significantly worse/);
  });

  it("does not roll back on a control too small to trust", () => {
    const step = decideCanaryStep(
      { stage: 0, canary: { n: 12, failures: 10 }, control: { n: 3, failures: 0 } },
      policy,
    );
    assert.equal(step.action, "hold");
  });

  it("rejects a ramp that does not end at 100%", () => {
    assert.throws(() => CanaryPolicy.parse({ ramp: [0.1, 0.5] }), /end at 1/);
  });
});
