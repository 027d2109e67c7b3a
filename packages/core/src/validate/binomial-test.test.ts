import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { binomialUpperTail, pairedWorseTest } from "./binomial-test.ts";

describe("binomialUpperTail", () => {
  it("matches hand-computed tails of Binomial(4, 0.5)", () => {
    assert.equal(binomialUpperTail(0, 4, 0.5), 1);
    assert.ok(Math.abs(binomialUpperTail(3, 4, 0.5) - 5 / 16) < 1e-12);
    assert.ok(Math.abs(binomialUpperTail(4, 4, 0.5) - 1 / 16) < 1e-12);
    assert.equal(binomialUpperTail(5, 4, 0.5), 0);
  });

  it("rejects a probability outside [0, 1] naming it", () => {
    assert.throws(() => binomialUpperTail(1, 3, 1.5), /p: expected a probability/);
  });
});

describe("pairedWorseTest", () => {
  it("does not call three regressions against one improvement significant", () => {
    const t = pairedWorseTest(3, 1);
    assert.equal(t.worse, false);
    assert.ok(Math.abs(t.pValue - 5 / 16) < 1e-12);
  });

  it("calls eight regressions and no improvement significantly worse", () => {
    const t = pairedWorseTest(8, 0);
    assert.equal(t.worse, true);
    assert.ok(t.pValue < 0.01);
  });

  it("never calls a candidate with no regressions worse", () => {
    assert.equal(pairedWorseTest(0, 0).worse, false);
    assert.equal(pairedWorseTest(0, 12).worse, false);
  });
});
