import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { WarmUpReport } from "@arc/rl";
import { warmupShortfall } from "./demo-outcome.ts";
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

  it("says why and what to do when the target is missed, and nothing of it when met", () => {
    const shortfall = "the SFT warm-up did 580 of 593 planned steps; run with a larger --minutes";
    const missed = demoVerdict({ ...served, baseRate: 0.21, finalRate: 0.12, shortfall });
    assert.match(
      missed.verdict,
      /target not met \(halve it with no pattern worse\)\. Why: the SFT warm-up did 580/,
    );
    const met = demoVerdict({ ...served, baseRate: 0.21, finalRate: 0.1, shortfall });
    assert.doesNotMatch(met.verdict, /Why/);
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

  it("states the rule the pattern verdicts follow", () => {
    assert.match(
      summaryTable(result),
      /patterns fixed: 0, worse: 0 \(of 0\)\n {2}fixed: .* fell, and the drop is significant/,
    );
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

describe("warmupShortfall", () => {
  const warmup: WarmUpReport = {
    runId: "sft",
    steps: 580,
    plannedSteps: 593,
    maxSteps: 1000,
    secondsPerStep: 0.74,
    tokensPerSecond: 2079,
    heldOutTarget: 0.105,
    budgetS: 480,
    targetReachedAtStep: null,
    heldOutFailureRate: 0.117,
    heldOutUpperBound: 0.18,
    stoppedAtDeadline: true,
    replans: [],
    records: [],
  };

  it("names the steps done against the plan, the measured speed, and a larger --minutes", () => {
    const text = warmupShortfall(warmup, 14) ?? "";
    assert.match(
      text,
      /did 580 of 593 planned steps \(--sft-steps allows 1000\) at 0\.74 s a step, 2079 training tokens\/s/,
    );
    assert.match(
      text,
      /held-out failure rate 0\.117 has a 95% upper bound of 0\.180, above the target 0\.105/,
    );
    // 1000 steps at 0.74 s need 740 s; the warm-up had 480 s of a 14-minute budget
    assert.match(
      text,
      /run with a larger --minutes \(about --minutes 22 gives it all 1000 steps at this machine's pace\)/,
    );
  });

  it("asks for the time of the steps that halve the rate when --sft-steps allows more, and says it re-planned", () => {
    const slowed = {
      ...warmup,
      maxSteps: 2000,
      replans: [{ atStep: 200, secondsPerStep: 0.98, plannedSteps: 467 }],
    };
    const text = warmupShortfall(slowed, 14) ?? "";
    assert.match(
      text,
      /did 580 of 593 planned steps \(re-planned to 467 when the machine slowed down; --sft-steps allows 2000\)/,
    );
    // 1500 steps at 0.74 s need 1,110 s; the warm-up had 480 s of a 14-minute budget
    assert.match(
      text,
      /about --minutes 33 gives it the 1500 steps that halve the failure rate on an idle machine at this machine's pace/,
    );
  });

  it("is null when the warm-up reached its held-out target", () => {
    assert.equal(warmupShortfall({ ...warmup, targetReachedAtStep: 400 }, 14), null);
  });
});
