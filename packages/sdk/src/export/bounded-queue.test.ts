import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BoundedQueue } from "./bounded-queue.ts";

describe("BoundedQueue", () => {
  it("hands items back oldest first", () => {
    const q = new BoundedQueue<number>(3);
    q.push(1);
    q.push(2);
    assert.equal(q.shift(), 1);
    q.push(3);
    q.push(4);
    assert.deepEqual([q.shift(), q.shift(), q.shift(), q.shift()], [2, 3, 4, undefined]);
  });

  it("evicts and returns the oldest item when pushed past its capacity", () => {
    const q = new BoundedQueue<number>(2);
    assert.equal(q.push(1), undefined);
    assert.equal(q.push(2), undefined);
    assert.equal(q.push(3), 1);
    assert.equal(q.size, 2);
    assert.deepEqual([q.shift(), q.shift()], [2, 3]);
  });

  it("puts an item back in front unless full", () => {
    const q = new BoundedQueue<number>(2);
    q.push(2);
    assert.equal(q.unshift(1), true);
    assert.equal(q.unshift(0), false);
    assert.equal(q.peek(), 1);
    assert.deepEqual([q.shift(), q.shift()], [1, 2]);
  });
});
