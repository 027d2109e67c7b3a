import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { randomId } from "./random-id.ts";

describe("randomId", () => {
  it("makes version 4 UUIDs, all distinct, across refills of its pool", () => {
    const ids = Array.from({ length: 10_000 }, randomId);
    for (const id of ids)
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(new Set(ids).size, ids.length);
  });

  it("spreads its bits as random bytes do", () => {
    // each of the 122 random bits is set in about half of 4,096 ids (a bias past 10% would fail)
    const ids = Array.from({ length: 4096 }, () => randomId().replaceAll("-", ""));
    const fixed = new Set([48, 49, 50, 51, 64, 65]);
    for (let bit = 0; bit < 128; bit++) {
      if (fixed.has(bit)) continue;
      const set = ids.filter((id) => (Number.parseInt(id[bit >> 2], 16) >> (3 - (bit & 3))) & 1).length;
      assert.ok(Math.abs(set / ids.length - 0.5) < 0.1, `bit ${bit} set in ${set} of ${ids.length}`);
    }
  });
});
