import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  judgementsBetween,
  judgementsInPlan,
  PartPace,
  plannedStepsThatFit,
  secondsOver,
} from "./warm-up-plan.ts";

describe("a planned warm-up's plan", () => {
  const now = 1_000_000;
  /** Judged every 200 steps from step 600 on (a first part), or from step 200 on (a re-planned one). */
  const first = { every: 200, first: 600 };
  const later = { every: 200, first: 200 };

  it("counts a part's judgements: its start, from its first judged step every 200 steps, and its end", () => {
    assert.equal(judgementsInPlan(400, first), 2, "the start and the end");
    assert.equal(judgementsInPlan(600, first), 2, "the start and step 600, its end");
    assert.equal(judgementsInPlan(832, first), 4, "0, 600, 800 and 832");
    assert.equal(judgementsInPlan(2000, first), 9, "0, 600, 800, ..., 2000");
    assert.equal(judgementsInPlan(450, later), 4, "a re-planned part: 0, 200, 400 and 450");
    assert.equal(judgementsBetween(400, 832, 832, first), 3, "600, 800 and 832 are still to come at 400");
    assert.equal(judgementsBetween(800, 832, 832, first), 1, "only the end is left at 800");
    assert.equal(judgementsBetween(832, 832, 832, first), 0);
  });

  it("plans the steps and judgements that fit in nine tenths of the time left, within the cap", () => {
    // 90 s: 233 steps of 0.3 s and two 10 s judgements (its start and end) take 89.9 s; one more would not fit
    assert.equal(plannedStepsThatFit(now, now + 100_000, { stepS: 0.3, judgementS: 10 }, 2000, first), 233);
    assert.equal(plannedStepsThatFit(now, now + 100_000, { stepS: 0.3, judgementS: 0 }, 2000, first), 300);
    assert.equal(
      plannedStepsThatFit(now, now + 100_000, { stepS: 0.01, judgementS: 1 }, 2000, first),
      2000,
      "the most steps cap it",
    );
    assert.equal(
      plannedStepsThatFit(now, now + 1000, { stepS: 5, judgementS: 10 }, 2000, first),
      1,
      "a step at least",
    );
    // at 0.5 s a step and 30 s a judgement, 540 s fit 840 steps: 420 s of steps and 4 judgements (0, 600, 800, 840)
    assert.equal(plannedStepsThatFit(now, now + 600_000, { stepS: 0.5, judgementS: 30 }, 2000, first), 840);
  });

  it("finds how far a slower pace would overrun the deadline, and nothing where the part still ends in time", () => {
    const deadline = now + 100_000;
    const at = { planned: 1000, step: 800, now, when: first };
    // 200 steps at 0.25 s and the judgement at 1000 (10 s) take 60 s: in time
    assert.equal(secondsOver({ ...at, pace: { stepS: 0.25, judgementS: 10 } }, deadline), 0);
    // at 0.5 s a step and 20 s a judgement they take 120 s: 20 s over
    assert.equal(secondsOver({ ...at, pace: { stepS: 0.5, judgementS: 20 } }, deadline), 20);
    // re-planned at that pace (judged every 200 steps), what is left fits with the plan's margin
    const pace = { stepS: 0.5, judgementS: 20 };
    const steps = plannedStepsThatFit(now, deadline, pace, 200, later);
    assert.equal(steps, 100, "50 s of steps and two judgements (its start and end) in 90 s");
    assert.equal(secondsOver({ planned: steps, step: 0, now, pace, when: later }, deadline), 0);
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
