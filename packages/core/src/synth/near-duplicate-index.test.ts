import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { NearDuplicateIndex } from "./near-duplicate-index.ts";

describe("near-duplicate index", () => {
  const index = NearDuplicateIndex.of([
    "Convert 50 USD to EUR.",
    "Add Dentist to my calendar on 2026-03-05 at 14:00.",
  ]);

  it("finds exact duplicates up to case, punctuation and accents", () => {
    assert.equal(index.find("convert 50 usd to eur"), "x0");
    assert.equal(index.find("CONVERT 50 USD TO EUR!!"), "x0");
  });

  it("finds a rephrasing that only adds a word", () => {
    assert.equal(index.find("Please convert 50 USD to EUR."), "x0");
  });

  it("keeps requests with another slot value apart", () => {
    assert.equal(index.find("Convert 50 USD to GBP."), undefined);
    assert.equal(index.find("Convert 55 USD to EUR."), undefined);
    assert.equal(index.find("Add Dentist to my calendar on 2026-03-06 at 14:00."), undefined);
  });
});
