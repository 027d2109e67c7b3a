import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normalCdf, proportionChangePValues, zWorse } from "./proportions.ts";

describe("normalCdf", () => {
  it("matches the standard normal table", () => {
    assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
    assert.ok(Math.abs(normalCdf(1.96) - 0.975) < 1e-4);
    assert.ok(Math.abs(normalCdf(-1.645) - 0.05) < 1e-4);
    assert.ok(Math.abs(normalCdf(3) - 0.99865) < 1e-5);
  });
});

describe("zWorse", () => {
  it("is positive when the second rate is higher, negative when lower, and matches the pooled formula", () => {
    // 20/100 → 35/100: pooled p 0.275, se sqrt(0.275·0.725·0.02) ≈ 0.06315, z ≈ 2.375
    assert.ok(Math.abs(zWorse(100, 20, 100, 35) - 2.375) < 1e-3);
    assert.ok(Math.abs(zWorse(100, 35, 100, 20) + 2.375) < 1e-3);
  });

  it("is 0 with an empty sample or no variance", () => {
    assert.equal(zWorse(0, 0, 10, 5), 0);
    assert.equal(zWorse(10, 0, 10, 0), 0);
    assert.equal(zWorse(10, 10, 10, 10), 0);
  });
});

describe("proportionChangePValues", () => {
  it("gives a small p for the direction the rate moved and a large one for the other", () => {
    const { rose, fell } = proportionChangePValues(1000, 200, 1000, 100);
    assert.ok(fell < 1e-6, `fell ${fell}`);
    assert.ok(rose > 0.999, `rose ${rose}`);
    assert.ok(Math.abs(rose + fell - 1) < 1e-12);
  });
});
