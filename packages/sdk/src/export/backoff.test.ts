import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { backoffDelay, retryAfterMs } from "./backoff.ts";

describe("backoffDelay", () => {
  it("doubles per failure within the upper half of its ceiling, never past the cap", () => {
    assert.equal(
      backoffDelay(1, 100, 10_000, () => 0),
      50,
    );
    assert.equal(
      backoffDelay(1, 100, 10_000, () => 1),
      100,
    );
    assert.equal(
      backoffDelay(3, 100, 10_000, () => 1),
      400,
    );
    assert.equal(
      backoffDelay(30, 100, 10_000, () => 1),
      10_000,
    );
  });
});

describe("retryAfterMs", () => {
  it("reads seconds and HTTP dates and ignores garbage", () => {
    assert.equal(retryAfterMs("2"), 2000);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(retryAfterMs("soon"), undefined);
    assert.equal(retryAfterMs(null), undefined);
  });
});
