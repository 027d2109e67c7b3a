import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { groupAdvantages } from "./group-advantages.ts";

const close = (actual: number[], expected: number[]) => {
  assert.equal(actual.length, expected.length, `${actual} vs ${expected}`);
  for (const [i, a] of actual.entries())
    assert.ok(Math.abs(a - expected[i]) < 1e-4, `${actual} vs ${expected}`);
};

describe("groupAdvantages", () => {
  it("normalizes by the group's mean and std (GRPO)", () => {
    // mean 0.5, population std 0.5
    close(groupAdvantages([1, 0, 1, 0]), [1, -1, 1, -1]);
    // mean 0.25, std sqrt(0.1875)
    const s = Math.sqrt(0.1875);
    close(groupAdvantages([1, 0, 0, 0]), [0.75 / s, -0.25 / s, -0.25 / s, -0.25 / s]);
  });

  it("only centres the rewards under Dr.GRPO normalization", () => {
    close(groupAdvantages([1, 0, 0, 0], "dr-grpo"), [0.75, -0.25, -0.25, -0.25]);
  });

  it("gives zero advantage to every sample of a group whose rewards tie", () => {
    assert.deepEqual(groupAdvantages([1, 1, 1]), [0, 0, 0]);
    assert.deepEqual(groupAdvantages([0, 0], "dr-grpo"), [0, 0]);
  });

  it("sums to zero within a group", () => {
    const a = groupAdvantages([0.2, 0.9, 0.4, 0.1, 0.7]);
    assert.ok(Math.abs(a.reduce((x, y) => x + y, 0)) < 1e-9);
  });
});
