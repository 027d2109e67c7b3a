import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { safeStringify } from "./safe-stringify.ts";

describe("safeStringify", () => {
  it("writes plain values exactly as JSON.stringify does", () => {
    const value = { a: [1, "x", null], b: { c: true } };
    assert.equal(safeStringify(value), JSON.stringify(value));
  });

  it("replaces cycles and bigints instead of failing, keeping repeated (non-cyclic) references", () => {
    const shared = { n: 1 };
    const value: Record<string, unknown> = { big: 10n, left: shared, right: shared };
    value.self = value;
    assert.deepEqual(JSON.parse(safeStringify(value)!), {
      big: "10",
      left: { n: 1 },
      right: { n: 1 },
      self: "[Circular]",
    });
  });

  it("gives up with undefined when a toJSON throws", () => {
    const value = {
      toJSON() {
        throw new Error("no");
      },
    };
    assert.equal(safeStringify(value), undefined);
  });
});
