import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatToolCall, generateToolcallTasks, type ToolcallSolution } from "@arc/core";
import { diagnoseToolcallProbe, toolcallTeacherReply, verifyToolcallAttempt } from "./toolcall-teaching.ts";

const tasks = generateToolcallTasks({ split: "production", seed: 3, count: 40 });
const booking = tasks.find((t) => (t.solution as ToolcallSolution).tool === "book_table")!;

describe("toolcall teaching labels", () => {
  it("diagnoses a probe that opens the right call as strong and gives no teaching", () => {
    const probe = formatToolCall(booking.solution as ToolcallSolution).slice(0, 50);
    const reply = toolcallTeacherReply(booking, probe);
    assert.equal(reply.diagnosis, "strong");
    assert.equal(reply.teaching, "");
    assert.match(reply.reply, /Diagnosis: strong<\/thinking><teaching><\/teaching>$/);
  });

  it("diagnoses a wrong tool, a wrong argument name or no call as weak", () => {
    assert.equal(diagnoseToolcallProbe(booking, '{"tool":"add_event","args":{"title":"X"').diagnosis, "weak");
    assert.equal(
      diagnoseToolcallProbe(booking, '{"tool":"book_table","args":{"restaurant":"X"').diagnosis,
      "weak",
    );
    assert.equal(diagnoseToolcallProbe(booking, "I would book it").diagnosis, "weak");
  });

  it("teaches a weak student the tool and argument names but never an argument value", () => {
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
