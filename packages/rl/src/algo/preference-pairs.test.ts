import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bestWorstPair } from "./preference-pairs.ts";

describe("bestWorstPair", () => {
  it("pairs the highest-reward sample against the lowest", () => {
    assert.deepEqual(bestWorstPair([0.5, 1, 0, 0.2]), { chosen: 1, rejected: 2, margin: 1 });
  });

  it("skips a group whose rewards all tie", () => {
    assert.equal(bestWorstPair([1, 1, 1]), null);
    assert.equal(bestWorstPair([0, 0]), null);
  });

  it("skips a group of one sample", () => {
    assert.equal(bestWorstPair([1]), null);
  });

  it("takes the earliest sample among equal best and equal worst rewards", () => {
    assert.deepEqual(bestWorstPair([0, 1, 0, 1]), { chosen: 1, rejected: 0, margin: 1 });
  });
});
