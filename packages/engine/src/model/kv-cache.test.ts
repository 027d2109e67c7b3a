import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { KvCache } from "./kv-cache.ts";

/** A cache of `rows` rows, 2 kv heads of width 2, 2 layers, whose every value names its layer, row, head and position. */
function filled(rows: number, length: number, capacity: number, tag = 0): KvCache {
  const cache = new KvCache(rows, 2, 2, 2, capacity);
  for (let r = 0; r < rows; r++)
    for (let l = 0; l < 2; l++)
      for (let h = 0; h < 2; h++)
        for (let s = 0; s < length; s++)
          for (let j = 0; j < 2; j++) {
            const value = tag + l * 1000 + r * 100 + h * 10 + s + j / 10;
            cache.keys[l][((r * 2 + h) * capacity + s) * 2 + j] = value;
            cache.values[l][((r * 2 + h) * capacity + s) * 2 + j] = -value;
          }
  cache.length = length;
  return cache;
}

/** The keys of one row, head and layer over positions [0, length), as numbers. */
function keysOf(cache: KvCache, layer: number, row: number, head: number): number[] {
  const start = (row * cache.kvHeads + head) * cache.capacity * cache.headDim;
  return [...cache.keys[layer].subarray(start, start + cache.length * cache.headDim)];
}

describe("KvCache", () => {
  it("keeps what it holds when it grows", () => {
    const cache = filled(2, 3, 4);
    const before = keysOf(cache, 1, 1, 1);
    cache.reserve(1);
    assert.equal(cache.capacity, 4);
    cache.reserve(2);
    assert.equal(cache.capacity, 6);
    assert.deepEqual(keysOf(cache, 1, 1, 1), before);
  });

  it("selects rows in order, repeating one", () => {
    const cache = filled(3, 2, 5);
    const picked = cache.selectRows([2, 0, 2]);
    assert.equal(picked.rows, 3);
    assert.equal(picked.length, 2);
    assert.deepEqual(keysOf(picked, 0, 0, 1), keysOf(cache, 0, 2, 1));
    assert.deepEqual(keysOf(picked, 1, 1, 0), keysOf(cache, 1, 0, 0));
    assert.deepEqual(keysOf(picked, 1, 2, 1), keysOf(cache, 1, 2, 1));
  });

  it("joins two caches, shifting the shorter one's positions right", () => {
    const a = filled(1, 2, 3, 0.5);
    const b = filled(2, 4, 4);
    const joined = KvCache.concatRows(a, b);
    assert.equal(joined.rows, 3);
    assert.equal(joined.length, 4);
    assert.deepEqual(keysOf(joined, 1, 0, 1).slice(4), keysOf(a, 1, 0, 1)); // a's 2 positions end at 4
    assert.deepEqual(keysOf(joined, 1, 2, 0), keysOf(b, 1, 1, 0));
  });

  it("places rows of a shorter cache into chosen rows, ending with its positions, and refuses a longer one", () => {
    const cache = filled(3, 5, 6);
    const untouched = keysOf(cache, 0, 1, 1);
    const joining = filled(2, 3, 3, 0.5);
    cache.placeRows(joining, [2, 0]);
    assert.equal(cache.length, 5);
    assert.deepEqual(keysOf(cache, 1, 2, 1).slice(4), keysOf(joining, 1, 0, 1)); // 3 positions end at 5
    assert.deepEqual(keysOf(cache, 0, 0, 0).slice(4), keysOf(joining, 0, 1, 0));
    assert.deepEqual(keysOf(cache, 0, 1, 1), untouched);
    assert.throws(() => cache.placeRows(filled(1, 6, 6), [1]), /6 positions do not fit before 5/);
  });

  it("drops leading positions of every row", () => {
    const cache = filled(2, 4, 4);
    const kept = keysOf(cache, 1, 1, 0).slice(2); // positions 1..3, two values each
    cache.dropLeading(1);
    assert.equal(cache.length, 3);
    assert.deepEqual(keysOf(cache, 1, 1, 0), kept);
  });

  it("writes new positions after the cached ones and reads them back densely", () => {
    const cache = filled(2, 1, 3);
    // [rows, T, kvHeads, headDim] = [2, 2, 2, 2]
    const keys = Float32Array.from({ length: 16 }, (_, i) => 500 + i);
    cache.write(
      0,
      keys,
      keys.map((x) => -x),
      2,
    );
    const dense = cache.dense(0, "keys", 3); // [2, 2, 3, 2]
    assert.deepEqual([...dense.subarray(0, 6)], [0, 0.1, 500, 501, 504, 505].map(Math.fround));
    assert.deepEqual([...dense.subarray(18, 24)], [110, 110.1, 510, 511, 514, 515].map(Math.fround));
  });
});
