import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ADAMW_DEFAULTS, AdamW, type AdamWOptions } from "./adamw.ts";

const base: AdamWOptions = { ...ADAMW_DEFAULTS, learningRate: 1e-3 };

/** The learning rate AdamW would use at each of the first `steps` updates. */
function schedule(options: AdamWOptions, steps: number): number[] {
  const optimizer = new AdamW(options);
  const rates: number[] = [];
  for (let i = 0; i < steps; i++) {
    rates.push(optimizer.learningRate());
    optimizer.step++;
  }
  return rates;
}

describe("AdamW learning-rate schedule", () => {
  it("warms up linearly, then holds the peak when there is no decay", () => {
    const rates = schedule({ ...base, warmupSteps: 4 }, 8);
    assert.deepEqual(
      rates.map((r) => Number(r.toExponential(6))),
      [2.5e-4, 5e-4, 7.5e-4, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3],
    );
  });

  it("decays by a cosine from the peak to minLearningRate after warm-up, then stays there", () => {
    const rates = schedule({ ...base, warmupSteps: 2, decaySteps: 4, minLearningRate: 1e-4 }, 9);
    assert.equal(rates[1], 1e-3);
    assert.equal(rates[2], 1e-3);
    assert.ok(Math.abs(rates[4] - 5.5e-4) < 1e-12, `half-way is the midpoint, got ${rates[4]}`);
    for (let i = 3; i <= 6; i++) assert.ok(rates[i] < rates[i - 1], `step ${i} decays`);
    assert.ok(Math.abs(rates[6] - 1e-4) < 1e-12);
    assert.ok(Math.abs(rates[8] - 1e-4) < 1e-12);
  });
});
