import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { patternVerdicts } from "./pattern-verdicts.ts";

describe("patternVerdicts", () => {
  it("calls a significant drop fixed, a significant rise worse, and anything else unchanged", () => {
    const verdicts = patternVerdicts(
      [
        { id: "p1", label: "truncation", baseFailures: 100, finalFailures: 20 },
        { id: "p2", label: "wrong city", baseFailures: 10, finalFailures: 60 },
        { id: "p3", label: "rare", baseFailures: 3, finalFailures: 2 },
      ],
      1000,
      1000,
    );
    assert.deepEqual(
      verdicts.map((v) => [v.label, v.verdict]),
      [
        ["truncation", "fixed"],
        ["wrong city", "worse"],
        ["rare", "unchanged"],
      ],
    );
    assert.equal(verdicts[0].baseIncidence, 0.1);
    assert.equal(verdicts[0].finalIncidence, 0.02);
  });

  it("calls a drop fixed by the test alone, not by how far the incidence fell", () => {
    const [v] = patternVerdicts([{ id: "p", label: "l", baseFailures: 300, finalFailures: 200 }], 1000, 1000);
    assert.equal(v.verdict, "fixed");
  });

  it("leaves every pattern unchanged when one model served both", () => {
    const verdicts = patternVerdicts(
      [{ id: "p", label: "l", baseFailures: 50, finalFailures: 50 }],
      500,
      500,
    );
    assert.equal(verdicts[0].verdict, "unchanged");
  });
});
