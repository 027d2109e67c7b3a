import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { routesToCanary, stickyBucket } from "./sticky-bucket.ts";

describe("stickyBucket", () => {
  it("puts the same key in the same place every time, and a key under 10% stays under 50%", () => {
    for (let i = 0; i < 200; i++) {
      const key = `user-${i}`;
      assert.equal(stickyBucket(key, "dep_1"), stickyBucket(key, "dep_1"));
      if (routesToCanary(key, "dep_1", 0.1)) assert.ok(routesToCanary(key, "dep_1", 0.5));
    }
  });

  it("sends about the configured share of distinct keys to the canary", () => {
    const n = 10_000;
    let canary = 0;
    for (let i = 0; i < n; i++) if (routesToCanary(`session-${i}`, "dep_x", 0.1)) canary++;
    assert.ok(canary / n > 0.08 && canary / n < 0.12, `share ${canary / n}`);
  });
});

describe("routesToCanary across deployments", () => {
  it("gives every deployment id close to its share of sequentially numbered keys", () => {
    for (let d = 0; d < 200; d++) {
      let canary = 0;
      for (let i = 0; i < 200; i++)
        if (routesToCanary(`conv-${i}`, `dep_${d.toString(16).padStart(12, "0")}`, 0.3)) canary++;
      assert.ok(canary >= 30 && canary <= 90, `deployment ${d}: ${canary} of 200 at 30%`);
    }
  });
});
