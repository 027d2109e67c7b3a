import assert from "node:assert/strict";
import { describe, it, mock } from "node:test";
import { isoNow } from "./iso-now.ts";

describe("isoNow", () => {
  it("writes the time as Date.prototype.toISOString does, at any millisecond of any second", () => {
    const times = [
      0, 7, 99, 999, 1_000, 1_767_225_599_999, 1_767_225_600_000, 253_402_300_799_999, -1,
      -62_198_755_200_001,
    ];
    const now = mock.method(Date, "now");
    try {
      for (const t of times) {
        now.mock.mockImplementation(() => t);
        assert.equal(isoNow(), new Date(t).toISOString(), `at ${t}`);
      }
      // the same second again, after others: the held text is not stale
      for (const t of [1_000, 1_999, 2_000, 1_500]) {
        now.mock.mockImplementation(() => t);
        assert.equal(isoNow(), new Date(t).toISOString(), `at ${t}`);
      }
    } finally {
      now.mock.restore();
    }
  });
});
