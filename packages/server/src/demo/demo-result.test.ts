import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type DemoResult, demoVerdict, summaryTable } from "./demo-result.ts";

describe("demoVerdict", () => {
  const served = { patternsWorse: 0, newModelServed: true, candidateStatus: "promoted" };

  it("meets the target only when a new model at least halves the failure rate with no pattern worse", () => {
    assert.equal(demoVerdict({ ...served, baseRate: 0.6, finalRate: 0.3 }).targetMet, true);
    assert.equal(demoVerdict({ ...served, baseRate: 0.6, finalRate: 0.31 }).targetMet, false);
    const worse = demoVerdict({ ...served, baseRate: 0.6, finalRate: 0.2, patternsWorse: 1 });
    assert.equal(worse.targetMet, false);
    assert.match(worse.verdict, /0\.60 → 0\.20, 1 pattern\(s\) worse: target not met/);
  });

  it("compares nothing when the base model stayed in production", () => {
    const v = demoVerdict({
      baseRate: 0.57,
      finalRate: 0.57,
      patternsWorse: 0,
      newModelServed: false,
      candidateStatus: "rolled_back",
    });
    assert.equal(v.targetMet, false);
    assert.match(v.verdict, /^no new model in production: the candidate ended rolled_back/);
    assert.match(v.verdict, /live failure rate 0\.57 over the demo/);
    assert.doesNotMatch(v.verdict, /→/);
  });

  it("says so when too few calls were judged", () => {
    assert.match(
      demoVerdict({ ...served, baseRate: null, finalRate: 0.2 }).verdict,
      /target not measured: too few judged calls/,
    );
  });
});

describe("summaryTable", () => {
  const result = {
    baseFailureRate: 0.57,
    finalFailureRate: 0.57,
    finalVersion: "toolcall-base",
    newModelServed: false,
    versions: [
      { id: "a", name: "toolcall-base", status: "promoted", n: 900, failures: 513, failureRate: 0.57 },
      {
        id: "b",
        name: "toolcall-dpo-run1",
        status: "rolled_back",
        n: 19,
        failures: 17,
        failureRate: 17 / 19,
      },
    ],
    patterns: [],
    patternsFixed: 0,
    patternsWorse: 0,
    ndr: 0.98,
    rollbacks: 1,
    wallS: 600,
    verdict: "no new model in production",
  } as unknown as DemoResult;

  it("shows one rate, not a before/after, for a production model that did not change", () => {
    const table = summaryTable(result);
    assert.match(
      table,
      /failure rate \(production model, live\): 0\.570 \(toolcall-base, unchanged: no new model in production\)/,
    );
    assert.doesNotMatch(table, /→/);
  });

  it("shows the before/after when a new model was promoted", () => {
    const table = summaryTable({
      ...result,
      newModelServed: true,
      finalFailureRate: 0.3,
      finalVersion: "toolcall-dpo-run1",
    });
    assert.match(table, /failure rate \(production model, live\): 0\.570 → 0\.300 \(toolcall-dpo-run1\)/);
  });
});
