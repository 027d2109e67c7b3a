import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mayStartRollout, trajectoryStaleness } from "./staleness-gate.ts";

const base = {
  currentVersion: 0,
  started: 0,
  batchSize: 4,
  maxStaleness: 0,
  running: 0,
  maxConcurrentRollouts: 64,
};

describe("staleness gate", () => {
  it("lets a synchronous run (maxStaleness 0) start only the current version's batch", () => {
    assert.equal(mayStartRollout({ ...base, started: 3 }), true);
    assert.equal(mayStartRollout({ ...base, started: 4 }), false);
    assert.equal(mayStartRollout({ ...base, started: 4, currentVersion: 1 }), true);
  });

  it("rejects a rollout that would be trained more than maxStaleness versions after it started", () => {
    const g = { ...base, maxStaleness: 2 };
    assert.equal(mayStartRollout({ ...g, started: 11 }), true); // batch 2 at version 0: 2 behind
    assert.equal(mayStartRollout({ ...g, started: 12 }), false); // batch 3: 3 behind
    assert.equal(mayStartRollout({ ...g, started: 12, currentVersion: 1 }), true);
  });

  it("never exceeds maxConcurrentRollouts in flight", () => {
    assert.equal(
      mayStartRollout({ ...base, maxStaleness: 100, running: 8, maxConcurrentRollouts: 8 }),
      false,
    );
  });

  it("measures a trajectory's staleness from its oldest token's version", () => {
    assert.equal(trajectoryStaleness([3, 5], 5), 2);
    assert.equal(trajectoryStaleness([5, 5], 5), 0);
  });
});
