import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatDuration, progressLine } from "./progress-line.ts";
import type { RunState, StepRecord } from "./run-types.ts";

const state = { totalSteps: 100 } as RunState;
const record = {
  step: 10,
  loss: 0.6925,
  reward: 0.5,
  accuracy: 0.25,
  tokensPerSecond: 1234.4,
  staleness: 1,
  evalFailureRate: 0.4,
} as StepRecord;

describe("progress line", () => {
  it("shows step, loss, reward, accuracy, tokens/s, staleness, held-out failure and ETA", () => {
    // 10 steps in 20 s: 2 s per step, 90 left
    assert.equal(
      progressLine(record, state, 1, 20),
      "step 10/100 loss 0.693 reward 0.500 acc 0.25 1234 tok/s staleness 1 held-out fail 0.40 ETA 3m00s",
    );
  });

  it("formats durations in hours, minutes or seconds", () => {
    assert.deepEqual(
      [formatDuration(42), formatDuration(185), formatDuration(3725)],
      ["42s", "3m05s", "1h02m"],
    );
  });
});
