import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { PartPace, paceWithJudgements, stepsCutOff, stepsThatFit } from "./warm-up.ts";

describe("the warm-up's plan", () => {
  const now = 1_000_000;

  it("plans the steps that fit in nine tenths of the time left, within the cap", () => {
    assert.equal(stepsThatFit(now, now + 100_000, 0.3, 2000), 300);
    assert.equal(stepsThatFit(now, now + 100_000, 0.03, 2000), 2000, "--sft-steps caps it");
    assert.equal(stepsThatFit(now, now + 100, 5, 2000), 1, "a step at least");
  });

  it("finds the steps a slower pace would cut off, and none where the plan still ends in time", () => {
    const deadline = now + 60_000;
    // 200 steps left at 0.25 s take 50 s: the plan ends in time
    assert.equal(stepsCutOff({ planned: 1000, step: 800, now, secondsPerStep: 0.25 }, deadline), 0);
    // at 0.5 s only 120 of the 200 left fit
    assert.equal(stepsCutOff({ planned: 1000, step: 800, now, secondsPerStep: 0.5 }, deadline), 80);
    // and re-planned at that pace, the steps left fit with the plan's margin
    const steps = stepsThatFit(now, deadline, 0.5, 200);
    assert.equal(steps, 108);
    assert.equal(stepsCutOff({ planned: steps, step: 0, now, secondsPerStep: 0.5 }, deadline), 0);
  });

  it("plans a probe's pace with the held-out judgements' share: 65 steps' time every 200 steps", () => {
    assert.ok(Math.abs(paceWithJudgements(0.3) - 0.3975) < 1e-12);
    assert.equal(stepsThatFit(now, now + 100_000, paceWithJudgements(0.3), 2000), 226);
  });

  it("reads the pace from the first step on, leaving the run's start-up and first judgement out", () => {
    const pace = new PartPace();
    pace.saw(0, now + 15_000); // the judgement at step 0, after the process and the model loaded
    assert.equal(pace.secondsPerStep(0, now + 15_000), null);
    pace.saw(1, now + 20_000);
    assert.equal(pace.secondsPerStep(1, now + 20_000), null, "one step is no pace yet");
    pace.saw(201, now + 80_000);
    assert.equal(pace.secondsPerStep(201, now + 80_000), 0.3);
  });
});
