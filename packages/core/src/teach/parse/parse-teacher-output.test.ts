import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { REDACTION } from "./answer-leak.ts";
import { parseTeacherOutput } from "./parse-teacher-output.ts";

const kinds = (out: { warnings: { kind: string }[] }) => out.warnings.map((w) => w.kind);

describe("parseTeacherOutput", () => {
  it("separates private thinking from teaching and reads the diagnosis", () => {
    const out = parseTeacherOutput(
      "<thinking>Approach misses the carry.\nDiagnosis: weak</thinking>\n<teaching>Carry the 1 into the tens.</teaching>",
    );
    assert.equal(out.thinking, "Approach misses the carry.\nDiagnosis: weak");
    assert.equal(out.teaching, "Carry the 1 into the tens.");
    assert.equal(out.diagnosis, "weak");
    assert.deepEqual(out.warnings, []);
  });

  it("treats an empty teaching block as a deliberate 'no help needed' and says so", () => {
    const out = parseTeacherOutput(
      "<thinking>Correct plan. Diagnosis: strong</thinking><teaching></teaching>",
    );
    assert.equal(out.teaching, "");
    assert.equal(out.diagnosis, "strong");
    assert.deepEqual(kinds(out), ["empty_teaching"]);
  });

  it("reads a self-closing <teaching/> as an empty teaching, not a missing one", () => {
    const out = parseTeacherOutput("<thinking>Diagnosis: strong</thinking><teaching/>");
    assert.equal(out.teaching, "");
    assert.deepEqual(kinds(out), ["empty_teaching"]);
  });

  it("uses the whole text as teaching when the teacher used no tags at all", () => {
    const out = parseTeacherOutput("Remember to convert hours to minutes first.");
    assert.equal(out.teaching, "Remember to convert hours to minutes first.");
    assert.equal(out.diagnosis, null);
    assert.deepEqual(kinds(out), ["missing_tag", "missing_tag"]);
    assert.deepEqual(
      out.warnings.map((w) => (w.kind === "missing_tag" ? w.tag : "")),
      ["thinking", "teaching"],
    );
  });

  it("uses the text after the thinking block when only <teaching> is missing", () => {
    const out = parseTeacherOutput("<thinking>ok</thinking>\nTry a table of values.");
    assert.equal(out.teaching, "Try a table of values.");
    assert.deepEqual(kinds(out), ["missing_tag"]);
  });

  it("keeps an unclosed thinking block private instead of showing it as teaching", () => {
    const out = parseTeacherOutput("<thinking>The student is wrong, the answer is 12 because");
    assert.equal(out.teaching, "");
    assert.deepEqual(kinds(out), ["unclosed_tag", "missing_tag", "empty_teaching"]);
  });

  it("reads an unclosed teaching block to the end of the output", () => {
    const out = parseTeacherOutput("<thinking>x</thinking><teaching>First isolate x, then");
    assert.equal(out.teaching, "First isolate x, then");
    assert.deepEqual(kinds(out), ["unclosed_tag"]);
  });

  it("ignores a <teaching> tag written inside the thinking", () => {
    const out = parseTeacherOutput(
      "<thinking>I could write <teaching>the answer is 9</teaching> but no.</thinking><teaching>Square both sides.</teaching>",
    );
    assert.equal(out.teaching, "Square both sides.");
  });

  it("redacts a leaked answer by default and reports how often it occurred", () => {
    const out = parseTeacherOutput(
      "<thinking>t</thinking><teaching>Multiply to get 56, so 56 it is.</teaching>",
      {
        answers: ["56"],
      },
    );
    assert.equal(out.teaching, `Multiply to get ${REDACTION}, so ${REDACTION} it is.`);
    assert.deepEqual(out.warnings, [
      {
        kind: "answer_leaked",
        answer: "56",
        occurrences: 2,
        action: "redacted",
        message: 'teaching states the answer "56" 2 time(s); occurrences redacted',
      },
    ]);
  });

  it("drops the whole teaching under the refuse policy", () => {
    const out = parseTeacherOutput("<teaching>The answer is Paris.</teaching>", {
      answers: ["Paris"],
      leakPolicy: "refuse",
    });
    assert.equal(out.teaching, "");
    assert.deepEqual(kinds(out), ["missing_tag", "answer_leaked", "empty_teaching"]);
  });

  it("does not report a leak when the answer is only in the private thinking", () => {
    const out = parseTeacherOutput(
      "<thinking>answer is 56</thinking><teaching>Use 7 groups of 8.</teaching>",
      {
        answers: ["56"],
      },
    );
    assert.deepEqual(out.warnings, []);
  });
});
