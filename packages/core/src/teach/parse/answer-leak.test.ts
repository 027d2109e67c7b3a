import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findAnswerLeaks, REDACTION, redactLeaks } from "./answer-leak.ts";

describe("findAnswerLeaks", () => {
  it("finds a numeric answer by value, whatever its formatting", () => {
    const text = "So you get 1,200 apples, i.e. 1200.0 in total.";
    const [leak] = findAnswerLeaks(text, ["1200"]);
    assert.equal(leak.ranges.length, 2);
    assert.equal(text.slice(...leak.ranges[0]), "1,200");
  });

  it("does not mistake a longer number or a decimal for the answer", () => {
    assert.deepEqual(findAnswerLeaks("Multiply 420 by 4.2 here", ["42"]), []);
  });

  it("finds a text answer as whole words, case-insensitively", () => {
    assert.equal(findAnswerLeaks("The capital is PARIS.", ["Paris"]).length, 1);
    assert.deepEqual(findAnswerLeaks("Comparison of parishes", ["Paris"]), []);
  });

  it("flags a single-digit answer only where it is presented as the result", () => {
    assert.deepEqual(findAnswerLeaks("Step 7: divide both sides.", ["7"]), []);
    assert.equal(findAnswerLeaks("so the answer is 7.", ["7"]).length, 1);
    assert.equal(findAnswerLeaks("x = 7", ["7"]).length, 1);
    assert.equal(findAnswerLeaks("each kid gets 7", ["7"]).length, 1);
    assert.equal(findAnswerLeaks("So 7 is the final answer.", ["7"]).length, 1);
    assert.deepEqual(findAnswerLeaks("Use 7 groups, then count.", ["7"]), []);
  });

  it("ignores empty answers", () => {
    assert.deepEqual(findAnswerLeaks("anything", ["", "  "]), []);
  });
});

describe("redactLeaks", () => {
  it("replaces each occurrence and keeps the rest of the teaching", () => {
    const text = "Result: 56. Check 56 again.";
    assert.equal(
      redactLeaks(text, findAnswerLeaks(text, ["56"])),
      `Result: ${REDACTION}. Check ${REDACTION} again.`,
    );
  });

  it("merges overlapping occurrences of two answers into one redaction", () => {
    const text = "it is 12 dollars";
    assert.equal(redactLeaks(text, findAnswerLeaks(text, ["12 dollars", "12"])), `it is ${REDACTION}`);
  });
});
