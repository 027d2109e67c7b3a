import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { judgementsInPlan, PartPace, plannedStepsThatFit, stepsCutOff, stepsThatFit } from "./warm-up.ts";

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

  it("counts a plan's judgements: its start, step 600, every 200 steps after it, and its end", () => {
    assert.equal(judgementsInPlan(400), 2, "the start and the end");
    assert.equal(judgementsInPlan(600), 2, "the start and step 600, its end");
    assert.equal(judgementsInPlan(832), 4, "0, 600, 800 and 832");
    assert.equal(judgementsInPlan(2000), 9, "0, 600, 800, ..., 2000");
  });

  it("plans the probe's steps with the plan's judgements in nine tenths of the time left", () => {
    // 90 s: 233 steps of 0.3 s and two 10 s judgements (its start and end) take 89.9 s; one more would not fit
    assert.equal(plannedStepsThatFit(now, now + 100_000, { stepS: 0.3, judgementS: 10 }, 2000), 233);
    assert.equal(
      plannedStepsThatFit(now, now + 100_000, { stepS: 0.01, judgementS: 1 }, 2000),
      2000,
      "--sft-steps caps it",
    );
    assert.equal(
      plannedStepsThatFit(now, now + 1000, { stepS: 5, judgementS: 10 }, 2000),
      1,
      "a step at least",
    );
    // at 0.5 s a step and 30 s a judgement, 540 s fit 840 steps: 420 s of steps and 4 judgements (0, 600, 800, 840)
    assert.equal(plannedStepsThatFit(now, now + 600_000, { stepS: 0.5, judgementS: 30 }, 2000), 840);
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
