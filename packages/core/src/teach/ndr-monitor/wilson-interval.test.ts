import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { wilsonInterval } from "./wilson-interval.ts";

const near = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-4, `${actual} != ${expected}`);

describe("wilsonInterval", () => {
  it("matches the textbook 95% interval for 5 of 10: [0.2366, 0.7634]", () => {
    const { lower, upper } = wilsonInterval(5, 10);
    near(lower, 0.2366);
    near(upper, 0.7634);
  });

  it("gives 10 of 10 the lower bound n/(n+z^2) = 0.7225 and upper bound 1", () => {
    const { lower, upper } = wilsonInterval(10, 10);
    near(lower, 10 / (10 + 1.96 ** 2));
    assert.equal(upper, 1);
  });

  it("gives 0 of 10 the upper bound z^2/(n+z^2) = 0.2775 and lower bound 0", () => {
    const { lower, upper } = wilsonInterval(0, 10);
    assert.equal(lower, 0);
    near(upper, 1.96 ** 2 / (10 + 1.96 ** 2));
  });

  it("is uninformative without trials", () => {
    assert.deepEqual(wilsonInterval(0, 0), { lower: 0, upper: 1 });
  });
});
