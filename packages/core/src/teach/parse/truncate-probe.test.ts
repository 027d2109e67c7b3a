import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approximateTokenCounter } from "./token-counter.ts";
import { truncateProbe } from "./truncate-probe.ts";

describe("truncateProbe", () => {
  it("passes a probe within budget through unchanged", () => {
    assert.deepEqual(truncateProbe("  Multiplication; use the times table.  ", 50), {
      approach: "Multiplication; use the times table.",
      warnings: [],
    });
  });

  it("cuts an over-long probe to maxProbeTokens and says by how much it ran over", () => {
    const long = Array.from({ length: 80 }, (_, i) => `w${i}`).join(" ");
    const out = truncateProbe(long, 50);
    assert.ok(approximateTokenCounter.count(out.approach) <= 50);
    assert.ok(long.startsWith(out.approach));
    assert.equal(out.warnings[0].kind, "probe_truncated");
    assert.deepEqual(
      out.warnings[0].kind === "probe_truncated" && [out.warnings[0].tokens, out.warnings[0].maxTokens],
      [160, 50],
    );
  });

  it("trusts the backend's count when it reports more tokens than the estimate", () => {
    const out = truncateProbe("one two three four five six seven eight nine ten", 5, { reportedTokens: 20 });
    assert.equal(out.approach, "one two");
    assert.equal(out.warnings[0].kind, "probe_truncated");
  });

  it("reports an empty probe", () => {
    assert.deepEqual(
      truncateProbe(" \n", 50).warnings.map((w) => w.kind),
      ["empty_probe"],
    );
  });
});
