import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../../errors/index.ts";
import { teachingMetrics, teachingMetricsBy, UNGROUPED } from "./teaching-metrics.ts";
import type { TeachingOutcome } from "./teaching-outcome.ts";

// Hand-made: one improvement, one both-correct with no teaching, one degradation, one improvement.
const outcomes: TeachingOutcome[] = [
  {
    tenantId: "acme",
    patternId: "p1",
    judgement: "weak",
    baselineScore: 0,
    taughtScore: 1,
    teachingTokens: 100,
    baselineTokens: 400,
    taughtTokens: 300,
    completed: true,
  },
  {
    tenantId: "acme",
    patternId: "p2",
    judgement: "strong",
    baselineScore: 1,
    taughtScore: 1,
    teachingTokens: 0,
    baselineTokens: 200,
    taughtTokens: 200,
    completed: true,
  },
  {
    tenantId: "globex",
    patternId: "p1",
    judgement: "strong",
    baselineScore: 1,
    taughtScore: 0,
    teachingTokens: 50,
    baselineTokens: 300,
    taughtTokens: 300,
    completed: false,
  },
  {
    tenantId: "globex",
    patternId: "p1",
    judgement: "weak",
    baselineScore: 0,
    taughtScore: 1,
    teachingTokens: 150,
    baselineTokens: 100,
    taughtTokens: 100,
    completed: true,
  },
];
const close = (actual: number | null, expected: number) =>
  assert.ok(actual !== null && Math.abs(actual - expected) < 1e-12, `${actual} != ${expected}`);

describe("teachingMetrics", () => {
  it("computes NDR as the share of interactions not made worse: 3 of 4", () => {
    const m = teachingMetrics(outcomes);
    assert.equal(m.ndr, 0.75);
    assert.equal(m.degradations, 1);
  });

  it("computes accuracies and the gain: taught 0.75, baseline 0.5, gain 0.25", () => {
    const m = teachingMetrics(outcomes);
    assert.equal(m.taughtAccuracy, 0.75);
    assert.equal(m.baselineAccuracy, 0.5);
    assert.equal(m.accuracyGain, 0.25);
  });

  it("computes completion rate 0.75 and mean teaching 75 tokens", () => {
    const m = teachingMetrics(outcomes);
    assert.equal(m.completionRate, 0.75);
    assert.equal(m.meanTeachingTokens, 75);
  });

  it("computes TES = (0.25 x 0.75) / (75 / 1000) = 2.5", () => {
    close(teachingMetrics(outcomes).tes, 2.5);
  });

  it("computes token efficiency = 1 - 900/1000 = 0.1", () => {
    close(teachingMetrics(outcomes).tokenEfficiency, 0.1);
  });

  it("computes the learning rate as the slope of taught score over interactions: -0.5/5 = -0.1", () => {
    close(teachingMetrics(outcomes).learningRate, -0.1);
    close(
      teachingMetrics([0, 0, 1, 1].map((s) => ({ taughtScore: s, teachingTokens: 10, completed: true })))
        .learningRate,
      0.4,
    );
  });

  it("leaves every figure undefined (null) when there are no interactions", () => {
    assert.deepEqual(teachingMetrics([]), {
      interactions: 0,
      taughtAccuracy: null,
      baselineAccuracy: null,
      accuracyGain: null,
      ndr: null,
      degradations: 0,
      learningRate: null,
      completionRate: null,
      meanTeachingTokens: null,
      tes: null,
      tokenEfficiency: null,
    });
  });

  it("leaves TES undefined when no teaching tokens were spent, instead of dividing by zero", () => {
    const m = teachingMetrics([{ baselineScore: 1, taughtScore: 1, teachingTokens: 0, completed: true }]);
    assert.equal(m.meanTeachingTokens, 0);
    assert.equal(m.tes, null);
    assert.equal(m.ndr, 1);
    assert.equal(m.learningRate, null);
  });

  it("leaves NDR, gain and TES undefined for production traffic without baselines", () => {
    const m = teachingMetrics([{ taughtScore: 1, teachingTokens: 30, completed: true }]);
    assert.equal(m.taughtAccuracy, 1);
    assert.equal(m.ndr, null);
    assert.equal(m.accuracyGain, null);
    assert.equal(m.tes, null);
    assert.equal(m.tokenEfficiency, null);
  });

  it("rejects an out-of-range score, naming the outcome's index", () => {
    assert.throws(
      () => teachingMetrics([{ taughtScore: 2, teachingTokens: 0, completed: true }]),
      (e: unknown) => e instanceof InvalidInputError && e.field === "outcomes.0.taughtScore",
    );
  });
});

describe("teachingMetricsBy", () => {
  it("groups per tenant", () => {
    const byTenant = teachingMetricsBy(outcomes, "tenantId");
    assert.deepEqual([...byTenant.keys()], ["acme", "globex"]);
    assert.equal(byTenant.get("acme")!.ndr, 1);
    assert.equal(byTenant.get("globex")!.ndr, 0.5);
  });

  it("groups per pattern", () => {
    const byPattern = teachingMetricsBy(outcomes, "patternId");
    assert.equal(byPattern.get("p1")!.interactions, 3);
    close(byPattern.get("p1")!.accuracyGain, 1 / 3);
    assert.equal(byPattern.get("p2")!.tes, null);
  });

  it("splits strong from weak students so their teaching lengths can be compared", () => {
    const byJudgement = teachingMetricsBy(outcomes, "judgement");
    assert.equal(byJudgement.get("strong")!.meanTeachingTokens, 25);
    assert.equal(byJudgement.get("weak")!.meanTeachingTokens, 125);
  });

  it("puts outcomes without the field under (none) and accepts a custom key", () => {
    const mixed = [...outcomes, { taughtScore: 0, teachingTokens: 5, completed: false }];
    assert.equal(teachingMetricsBy(mixed, "tenantId").get(UNGROUPED)!.interactions, 1);
    const byCompleted = teachingMetricsBy(outcomes, (o) => (o.completed ? "done" : "cut"));
    assert.equal(byCompleted.get("cut")!.interactions, 1);
  });
});
