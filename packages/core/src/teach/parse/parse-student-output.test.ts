import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseStudentOutput } from "./parse-student-output.ts";

describe("parseStudentOutput", () => {
  it("extracts a closed solution as a completed answer", () => {
    assert.deepEqual(parseStudentOutput("7*8 is 56.\n<solution> 56 </solution>"), {
      answer: "56",
      completed: true,
      warnings: [],
    });
  });

  it("returns no answer when the student never opened a solution tag", () => {
    const out = parseStudentOutput("I think it is 56");
    assert.equal(out.answer, null);
    assert.equal(out.completed, false);
    assert.deepEqual(
      out.warnings.map((w) => w.kind),
      ["missing_tag"],
    );
  });

  it("keeps an unclosed solution's content but does not count it as completed", () => {
    const out = parseStudentOutput("<solution>5");
    assert.equal(out.answer, "5");
    assert.equal(out.completed, false);
    assert.deepEqual(
      out.warnings.map((w) => w.kind),
      ["unclosed_tag"],
    );
  });

  it("flags an empty solution", () => {
    const out = parseStudentOutput("<solution></solution>");
    assert.equal(out.answer, "");
    assert.equal(out.completed, false);
    assert.deepEqual(
      out.warnings.map((w) => w.kind),
      ["empty_solution"],
    );
  });
});
