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

  it("calls one new failure among a hundred calls unchanged, and five worse, among a demo's 13 patterns", () => {
    // the new model's 109 calls against the base model's 2,330: one malformed answer is no evidence of a rise
    const others = Array.from({ length: 11 }, (_, i) => ({
      id: `o${i}`,
      label: `other ${i}`,
      baseFailures: 20,
      finalFailures: 1,
    }));
    const verdicts = patternVerdicts(
      [
        { id: "p", label: "one malformed answer", baseFailures: 0, finalFailures: 1 },
        { id: "q", label: "five malformed answers", baseFailures: 0, finalFailures: 5 },
        ...others,
      ],
      2330,
      109,
    );
    assert.deepEqual(
      verdicts.slice(0, 2).map((v) => v.verdict),
      ["unchanged", "worse"],
    );
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
