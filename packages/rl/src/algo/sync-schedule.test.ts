import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generatorStepAt, syncDue } from "./sync-schedule.ts";

describe("sync schedule", () => {
  it("syncs after every step when online (s = 1)", () => {
    assert.deepEqual(
      [1, 2, 3].map((s) => syncDue(s, 1)),
      [true, true, true],
    );
    assert.deepEqual(
      [1, 2, 3].map((s) => generatorStepAt(s, 1)),
      [0, 1, 2],
    );
  });

  it("syncs after every s-th step when semi-online", () => {
    assert.deepEqual(
      [1, 9, 10, 11, 20].map((s) => syncDue(s, 10)),
      [false, false, true, false, true],
    );
    assert.deepEqual(
      [1, 10, 11, 20, 21].map((s) => generatorStepAt(s, 10)),
      [0, 0, 10, 10, 20],
    );
  });

  it("never syncs when offline (s = inf): the generator stays the initial model", () => {
    assert.equal(syncDue(1000, "inf"), false);
    assert.equal(generatorStepAt(1000, "inf"), 0);
  });
});
