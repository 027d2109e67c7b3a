import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { holmBonferroni } from "./holm-bonferroni.ts";

describe("holmBonferroni", () => {
  it("compares the k-th smallest p-value with alpha/(m-k) and stops at the first that is not below", () => {
    const decisions = holmBonferroni([0.04, 0.001, 0.012, 0.3], 0.05);
    assert.deepEqual(
      decisions.map((d) => [d.threshold, d.rejected]),
      [
        [0.05 / 2, false],
        [0.05 / 4, true],
        [0.05 / 3, true],
        [0.05 / 1, false],
      ],
    );
  });

  it("rejects nothing after the first p-value that holds, even a later one under alpha", () => {
    const decisions = holmBonferroni([0.03, 0.04], 0.05);
    assert.deepEqual(
      decisions.map((d) => d.rejected),
      [false, false],
    );
  });

  it("refuses an alpha outside (0, 1)", () => {
    assert.throws(() => holmBonferroni([0.1], 0), /alpha: expected a level in \(0, 1\), got 0/);
  });
});
