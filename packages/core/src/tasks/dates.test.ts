import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatTime12, parseDate, parseTime } from "./dates.ts";

describe("dates and times", () => {
  it("reads the date formats people and models write as one ISO date", () => {
    for (const text of [
      "2026-03-05",
      "2026/3/5",
      "March 5, 2026",
      "Mar 5",
      "5 March",
      "03/05/2026",
      "march 5th",
    ]) {
      assert.equal(parseDate(text), "2026-03-05", text);
    }
  });

  it("refuses dates that do not exist", () => {
    assert.equal(parseDate("2026-02-30"), null);
    assert.equal(parseDate("Smarch 5"), null);
  });

  it("reads 12- and 24-hour times and writes 12-hour ones", () => {
    assert.equal(parseTime("7pm"), "19:00");
    assert.equal(parseTime("7:30 AM"), "07:30");
    assert.equal(parseTime("19:00"), "19:00");
    assert.equal(parseTime("25:00"), null);
    assert.equal(parseTime("7"), null);
    assert.equal(formatTime12("14:30"), "2:30pm");
    assert.equal(formatTime12("00:00"), "12am");
  });
});
