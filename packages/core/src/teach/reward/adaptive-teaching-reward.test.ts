import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../../errors/index.ts";
import {
  AdaptiveTeachingRewardConfig,
  adaptiveTeachingReward,
  adaptiveTeachingRewardConfig,
  solutionEfficiency,
  type TeachingComparison,
} from "./adaptive-teaching-reward.ts";

const base: TeachingComparison = {
  taughtScore: 1,
  baselineScore: 0,
  teachingTokens: 100,
  taughtTokens: 300,
  baselineTokens: 400,
};
const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${actual} != ${expected}`);

describe("adaptiveTeachingReward, form 'delta' (default)", () => {
  it("rewards an improvement with 1 + 100/(100+teachingTokens): 1.5 for 100 teaching tokens", () => {
    assert.equal(adaptiveTeachingReward(base), 1.5);
  });

  it("pays more for shorter teaching: 2 for empty teaching, 1.25 for 300 tokens", () => {
    assert.equal(adaptiveTeachingReward({ ...base, teachingTokens: 0 }), 2);
    assert.equal(adaptiveTeachingReward({ ...base, teachingTokens: 300 }), 1.25);
  });

  it("gives 0 when both runs are correct and when both are wrong (delta 0)", () => {
    assert.equal(adaptiveTeachingReward({ ...base, baselineScore: 1 }), 0);
    assert.equal(adaptiveTeachingReward({ ...base, taughtScore: 0 }), 0);
  });

  it("punishes a degradation with -m*|delta|: -2 by default", () => {
    assert.equal(adaptiveTeachingReward({ ...base, taughtScore: 0, baselineScore: 1 }), -2);
  });

  it("scales with a partial delta: 0.5*(1+100/250) = 0.7 up, -2*0.3 = -0.6 down", () => {
    close(
      adaptiveTeachingReward({ ...base, taughtScore: 0.75, baselineScore: 0.25, teachingTokens: 150 }),
      0.7,
    );
    close(adaptiveTeachingReward({ ...base, taughtScore: 0.2, baselineScore: 0.5 }), -0.6);
  });

  it("uses the configured weight and multiplier: w=0.5 gives 1.25, m=3 gives -3", () => {
    const config = { efficiencyWeight: 0.5, degradationMultiplier: 3 };
    assert.equal(adaptiveTeachingReward(base, config), 1.25);
    assert.equal(adaptiveTeachingReward({ ...base, taughtScore: 0, baselineScore: 1 }, config), -3);
  });
});

describe("adaptiveTeachingReward, form 'outcome'", () => {
  const outcome = { form: "outcome" } as const;

  it("rewards an improvement with 1 + eff: 1.25 when the solution shrinks from 400 to 300 tokens", () => {
    assert.equal(adaptiveTeachingReward(base, outcome), 1.25);
  });

  it("gives an improvement exactly 1 when the taught solution is longer (eff floors at 0)", () => {
    assert.equal(adaptiveTeachingReward({ ...base, taughtTokens: 500 }, outcome), 1);
  });

  it("gives both-correct the efficiency alone: 0.75 for 400 -> 100 tokens, 0 when longer", () => {
    assert.equal(adaptiveTeachingReward({ ...base, baselineScore: 1, taughtTokens: 100 }, outcome), 0.75);
    assert.equal(adaptiveTeachingReward({ ...base, baselineScore: 1, taughtTokens: 450 }, outcome), 0);
  });

  it("gives a degradation the degradation penalty: -1 by default, -0.5 when configured", () => {
    const degraded = { ...base, taughtScore: 0, baselineScore: 1 };
    assert.equal(adaptiveTeachingReward(degraded, outcome), -1);
    assert.equal(adaptiveTeachingReward(degraded, { form: "outcome", degradationPenalty: -0.5 }), -0.5);
  });

  it("gives both-wrong 0 even when the taught solution is shorter", () => {
    assert.equal(adaptiveTeachingReward({ ...base, taughtScore: 0, taughtTokens: 10 }, outcome), 0);
  });

  it("rejects partial scores, which have no correct/wrong reading", () => {
    assert.throws(
      () => adaptiveTeachingReward({ ...base, taughtScore: 0.5 }, outcome),
      /taughtScore: form 'outcome' needs a score of 0 or 1, got 0.5/,
    );
  });
});

describe("solutionEfficiency", () => {
  it("is the share of baseline length saved, floored at 0, and 0 without a baseline length", () => {
    assert.equal(solutionEfficiency(400, 100), 0.75);
    assert.equal(solutionEfficiency(400, 600), 0);
    assert.equal(solutionEfficiency(0, 10), 0);
  });
});

describe("adaptiveTeachingRewardConfig", () => {
  it("defaults to form delta, penalty -1, multiplier 2, weight 1, probe budget 50", () => {
    assert.deepEqual(adaptiveTeachingRewardConfig(), {
      form: "delta",
      degradationPenalty: -1,
      degradationMultiplier: 2,
      efficiencyWeight: 1,
      maxProbeTokens: 50,
    });
  });

  it("rejects a positive degradation penalty, naming the recipe field", () => {
    assert.throws(
      () => adaptiveTeachingRewardConfig({ degradationPenalty: 1 }),
      (e: unknown) =>
        e instanceof InvalidInputError && e.field === "trainer.reward.adaptiveTeaching.degradationPenalty",
    );
  });

  it("rejects an unknown form and lists the valid ones", () => {
    assert.throws(() => adaptiveTeachingRewardConfig({ form: "linear" as never }), /'delta' \| 'outcome'/);
  });

  it("rejects bad comparison input with the field and the value", () => {
    assert.throws(
      () => adaptiveTeachingReward({ ...base, teachingTokens: -1 }),
      /teachingTokens: expected a non-negative token count, got -1/,
    );
    assert.throws(
      () => adaptiveTeachingReward({ ...base, baselineScore: Number.NaN }),
      /baselineScore: expected a score in \[0, 1\]/,
    );
  });

  it("describes every field", () => {
    for (const [name, field] of Object.entries(AdaptiveTeachingRewardConfig.shape))
      assert.ok(field.description, `${name} has no description`);
  });
});
