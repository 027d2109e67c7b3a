import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { batchAt, itemAt } from "./prompt-order.ts";

describe("prompt order", () => {
  it("visits every item once per epoch", () => {
    const epoch = Array.from({ length: 10 }, (_, p) => itemAt(p, 10, 7)).sort((a, b) => a - b);
    assert.deepEqual(epoch, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("recomputes the same batch for a step after a restart, and differs across seeds", () => {
    assert.deepEqual(batchAt(5, 4, 50, 1), batchAt(5, 4, 50, 1));
    assert.notDeepEqual(
      Array.from({ length: 8 }, (_, s) => batchAt(s + 1, 4, 50, 1)),
      Array.from({ length: 8 }, (_, s) => batchAt(s + 1, 4, 50, 2)),
    );
  });

  it("reshuffles each epoch", () => {
    const e0 = Array.from({ length: 20 }, (_, p) => itemAt(p, 20, 3));
    const e1 = Array.from({ length: 20 }, (_, p) => itemAt(20 + p, 20, 3));
    assert.notDeepEqual(e0, e1);
  });
});
