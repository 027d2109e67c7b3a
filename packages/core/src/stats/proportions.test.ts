import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { logGamma, proportionChangePValues } from "./proportions.ts";

describe("logGamma", () => {
  it("gives ln (n-1)! at the integers and ln sqrt(pi) at 1/2", () => {
    assert.ok(Math.abs(logGamma(1)) < 1e-12);
    assert.ok(Math.abs(logGamma(5) - Math.log(24)) < 1e-12);
    assert.ok(Math.abs(logGamma(171) - 706.5730622457874) < 1e-9);
    assert.ok(Math.abs(logGamma(0.5) - 0.5 * Math.log(Math.PI)) < 1e-12);
  });
});

describe("proportionChangePValues (Fisher's exact test, one-sided)", () => {
  it("gives Fisher's tea-tasting p-value: 3 of 4 after against 1 of 4 before", () => {
    // P(X >= 3), X ~ Hypergeometric(8 cups, 4 events, 4 drawn) = (C(4,3) C(4,1) + C(4,4)) / C(8,4) = 17/70
    const { rose, fell } = proportionChangePValues(4, 1, 4, 3);
    assert.ok(Math.abs(rose - 17 / 70) < 1e-12, `rose ${rose}`);
    assert.ok(Math.abs(fell - 69 / 70) < 1e-12, `fell ${fell}`);
  });

  it("does not call one event among 109 calls significantly more than none among 2,330", () => {
    // the chance that the one event falls among the 109 later calls is 109 / 2,439
    const { rose } = proportionChangePValues(2330, 0, 109, 1);
    assert.ok(Math.abs(rose - 109 / 2439) < 1e-12, `rose ${rose}`);
  });

  it("gives a small p for the direction the rate moved and a large one for the other", () => {
    const { rose, fell } = proportionChangePValues(1000, 200, 1000, 100);
    assert.ok(fell < 1e-9, `fell ${fell}`);
    assert.ok(rose > 0.999999, `rose ${rose}`);
  });

  it("is 1 both ways with an empty sample, no events or nothing but events", () => {
    assert.deepEqual(proportionChangePValues(0, 0, 10, 5), { rose: 1, fell: 1 });
    assert.deepEqual(proportionChangePValues(10, 0, 10, 0), { rose: 1, fell: 1 });
    assert.deepEqual(proportionChangePValues(10, 10, 10, 10), { rose: 1, fell: 1 });
  });
});
