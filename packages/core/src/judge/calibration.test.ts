import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type CalibrationItem, calibrationReport } from "./calibration.ts";

const item = (
  label: [boolean, string?],
  judged: [boolean, string?] | null,
  traceId = "t",
): CalibrationItem => ({
  traceId,
  label: { failed: label[0], ...(label[1] ? { class: label[1] } : {}) },
  judged: judged && { failed: judged[0], ...(judged[1] ? { class: judged[1] } : {}) },
});

describe("judge calibration", () => {
  it("computes agreement and Cohen's kappa of failed/passed, leaving out what the judge could not judge", () => {
    // 10 judged: labels 4 failed / 6 passed; the judge flags 3 of the 4 and 1 of the 6
    const items = [
      ...Array.from({ length: 3 }, () => item([true, "wrong_argument"], [true, "wrong_argument"])),
      item([true, "wrong_tool"], [false]),
      item([false], [true, "wrong_tool"]),
      ...Array.from({ length: 5 }, () => item([false], [false])),
      item([true, "wrong_tool"], null),
    ];
    const report = calibrationReport(items);
    assert.equal(report.items, 11);
    assert.equal(report.judged, 10);
    assert.equal(report.unjudged, 1);
    assert.equal(report.agreement, 0.8);
    // chance agreement: 0.4 × 0.4 + 0.6 × 0.6 = 0.52; kappa = (0.8 - 0.52) / 0.48
    assert.ok(Math.abs((report.kappa ?? 0) - 0.28 / 0.48) < 1e-12);
    assert.deepEqual(report.failed, { precision: 0.75, recall: 0.75 });
    assert.deepEqual(report.classes, [
      { name: "wrong_argument", labelled: 3, flagged: 3, precision: 1, recall: 1 },
      { name: "wrong_tool", labelled: 1, flagged: 1, precision: 0, recall: 0 },
    ]);
  });

  it("gives null where a figure is undefined rather than a number that means nothing", () => {
    const none = calibrationReport([item([true, "wrong_tool"], null)]);
    assert.equal(none.agreement, null);
    assert.equal(none.kappa, null);
    assert.deepEqual(none.failed, { precision: null, recall: null });
    // both raters always say "passed": agreement 1, kappa undefined
    const constant = calibrationReport([item([false], [false]), item([false], [false])]);
    assert.equal(constant.agreement, 1);
    assert.equal(constant.kappa, null);
  });

  it("scores a judge that answers the opposite of every label below chance", () => {
    const report = calibrationReport([item([true, "x"], [false]), item([false], [true, "x"])]);
    assert.equal(report.agreement, 0);
    assert.equal(report.kappa, -1);
  });
});
