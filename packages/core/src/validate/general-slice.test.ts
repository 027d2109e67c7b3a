import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type GeneralItem, judgeGeneral } from "./general-slice.ts";

const item = (check: GeneralItem["check"], expected: string): GeneralItem => ({
  id: "g",
  topic: "t",
  prompt: "p",
  check,
  expected,
});

describe("judgeGeneral", () => {
  it("checks a number by the last number in the answer", () => {
    assert.equal(judgeGeneral(item("number", "1000"), "There are 1,000 grams.").pass, true);
    assert.equal(judgeGeneral(item("number", "65"), "65").pass, true);
    assert.equal(judgeGeneral(item("number", "65"), "35 + 30 = 65").pass, true);
    assert.equal(judgeGeneral(item("number", "65"), "65 - 9 = 56").pass, false);
    assert.match(judgeGeneral(item("number", "65"), "sixty-five").reason ?? "", /expected the number 65/);
  });

  it("checks an exact answer ignoring case, surrounding quotes and a final period", () => {
    assert.equal(judgeGeneral(item("exact", "apple river"), ' "Apple river." ').pass, true);
    assert.equal(judgeGeneral(item("exact", "yes"), "yes, sure").pass, false);
  });

  it("checks that the expected word appears as a whole word", () => {
    assert.equal(judgeGeneral(item("contains", "Paris"), "The capital of France is Paris.").pass, true);
    assert.equal(judgeGeneral(item("contains", "Rome"), "Romeo").pass, false);
  });
});
