import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatToolCall, parseTeacherOutput, type Task } from "@arc/core";
import { generateToolcallTasks, type ToolcallSolution, toolcallConversions } from "@arc/core/families";
import { teachingHint } from "../../data/sft-examples.ts";
import {
  diagnoseToolcallProbe,
  falseConversions,
  tellsConversions,
  toolcallAnswers,
  toolcallTeacherReply,
  verifyToolcallAttempt,
} from "./toolcall-teaching.ts";

const tasks = generateToolcallTasks({ split: "production", seed: 3, count: 40 });
const booking = tasks.find(
  (t) => (t.solution as ToolcallSolution).tool === "book_table" && t.question.includes("2026-"),
)!;
const eventInWords = tasks.find((t) => t.meta?.template === "event2")!;

describe("toolcall teaching labels", () => {
  it("diagnoses a probe that opens the right call as strong and gives no teaching", () => {
    const probe = formatToolCall(booking.solution as ToolcallSolution).slice(0, 50);
    const reply = toolcallTeacherReply(booking, probe);
    assert.equal(reply.diagnosis, "strong");
    assert.equal(reply.teaching, "");
    assert.match(reply.reply, /Diagnosis: strong<\/thinking><teaching><\/teaching>$/);
  });

  it("tells a strong student nothing by default, or only the conversions a request written in words needs", () => {
    const probe = formatToolCall(eventInWords.solution as ToolcallSolution).slice(0, 50);
    assert.equal(toolcallTeacherReply(eventInWords, probe).teaching, "");
    const reply = toolcallTeacherReply(eventInWords, probe, "all");
    assert.equal(reply.diagnosis, "strong");
    assert.match(reply.teaching, /^[A-Z][a-z]+ is month \d\d; \d{1,2}(:\d\d)?[ap]m is hour \d\d\.$/);
    assert.ok(!reply.teaching.includes("add_event"));
  });

  it("tells a strong student its conversions only when its kind of request is listed", () => {
    const bookingInWords = tasks.find((t) => t.meta?.template === "book2")!;
    const probeOf = (task: Task) => formatToolCall(task.solution as ToolcallSolution).slice(0, 50);
    const told = ["book_table:month"];
    assert.match(
      toolcallTeacherReply(bookingInWords, probeOf(bookingInWords), told).teaching,
      /^[A-Z][a-z]+ is month \d\d\.$/,
    );
    assert.equal(toolcallTeacherReply(eventInWords, probeOf(eventInWords), told).teaching, "");
    assert.equal(
      tellsConversions(booking, "all"),
      false,
      "a request written as the call needs no conversions",
    );
    const weak = toolcallTeacherReply(eventInWords, '{"tool":"book_table"', []);
    assert.match(
      weak.teaching,
      /^Call the tool add_event .* is month \d\d; /,
      "a weak student hears the full hint",
    );
  });

  it("finds the conversions a teaching states that are not its request's", () => {
    const [month, hour] = toolcallConversions(eventInWords);
    const otherMonth = month.startsWith("July") ? "June is month 06" : "July is month 07";
    assert.deepEqual(falseConversions(eventInWords, `${month}; ${hour}.`), []);
    assert.deepEqual(falseConversions(eventInWords, teachingHint(eventInWords)), []);
    assert.deepEqual(falseConversions(eventInWords, `${otherMonth}; ${hour}; 11pm is hour 23.`), [
      otherMonth,
      "11pm is hour 23",
    ]);
    assert.deepEqual(falseConversions(booking, "March is month 03."), ["March is month 03"]);
  });

  it("diagnoses a wrong tool, a wrong argument name or no call as weak", () => {
    assert.equal(diagnoseToolcallProbe(booking, '{"tool":"add_event","args":{"title":"X"').diagnosis, "weak");
    assert.equal(
      diagnoseToolcallProbe(booking, '{"tool":"book_table","args":{"restaurant":"X"').diagnosis,
      "weak",
    );
    assert.equal(diagnoseToolcallProbe(booking, "I would book it").diagnosis, "weak");
  });

  it("diagnoses a value written out in full that is not the request's as weak, and ignores a cut-off one", () => {
    const { people, place } = (booking.solution as ToolcallSolution).args as {
      people: number;
      place: string;
    };
    const opening = `{"tool":"book_table","args":{"people":`;
    assert.equal(
      diagnoseToolcallProbe(booking, `${opening}${people},"place":"${place}"`).diagnosis,
      "strong",
    );
    const wrong = diagnoseToolcallProbe(booking, `${opening}${people + 1},"place":"${place.slice(0, 2)}`);
    assert.deepEqual(wrong, {
      diagnosis: "weak",
      thinking: "The request needs book_table; the student's people is not the request's.",
    });
    assert.equal(diagnoseToolcallProbe(booking, `${opening}${people},"place":"Nowhere"}`).diagnosis, "weak");
    assert.equal(
      diagnoseToolcallProbe(booking, `${opening}${people},"place":"${place.slice(0, 2)}`).diagnosis,
      "strong",
    );
  });

  it("teaches a weak student the tool, the argument names and the conversions, but never an argument value", () => {
    for (const task of tasks) {
      const reply = toolcallTeacherReply(task, "no idea");
      const call = task.solution as ToolcallSolution;
      assert.equal(reply.diagnosis, "weak");
      assert.match(reply.teaching, new RegExp(`Call the tool ${call.tool} `));
      for (const key of Object.keys(call.args)) assert.ok(reply.teaching.includes(key), key);
      const words = new Set(reply.teaching.split(/[^\w-]+/));
      for (const value of Object.values(call.args))
        assert.ok(
          !String(value)
            .split(/\s+/)
            .every((w) => words.has(w)),
          `teaching reveals ${value}: ${reply.teaching}`,
        );
    }
  });

  it("redacts an argument value a teacher writes, and none of the reference rule's teaching", () => {
    const call = booking.solution as ToolcallSolution;
    const leaky = `<thinking>Diagnosis: weak</thinking><teaching>Book ${call.args.place}.</teaching>`;
    const read = parseTeacherOutput(leaky, { answers: toolcallAnswers(booking) });
    assert.equal(read.teaching, "Book [answer withheld].");
    for (const task of generateToolcallTasks({ split: "production", seed: 4, count: 300 })) {
      const { reply } = toolcallTeacherReply(task, "no idea");
      const parsed = parseTeacherOutput(reply, { answers: toolcallAnswers(task) });
      assert.deepEqual(parsed.warnings, [], reply);
    }
  });

  it("verifies a bare JSON call or one inside <solution>, and rejects a wrong call", async () => {
    const text = formatToolCall(booking.solution as ToolcallSolution);
    assert.equal(await verifyToolcallAttempt({ answer: null, text }, booking), true);
    assert.equal(
      await verifyToolcallAttempt({ answer: text, text: `<solution>${text}</solution>` }, booking),
      true,
    );
    assert.equal(
      await verifyToolcallAttempt({ answer: null, text: text.replace("book_table", "add_event") }, booking),
      false,
    );
  });
});
