import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  type ChatCompletion,
  type ChatModel,
  type CompleteOptions,
  formatToolCall,
  type Task,
  type TeachMessage,
} from "@arc/core";
import { generateToolcallTasks, type ToolcallSolution, toolcallConversionKind } from "@arc/core/families";
import {
  TOOLCALL_TEACHING_TEMPLATES,
  toolcallTeaching,
  verifyToolcallAttempt,
} from "../families/toolcall/toolcall-teaching.ts";
import { kindsWorthTelling, measureStrongConversions } from "./measure-strong-conversions.ts";
import { TeachingRewarder } from "./teaching-rewarder.ts";

const tasks = generateToolcallTasks({ split: "production", seed: 21, count: 120 });

/**
 * Test double of a student (no model this small behaves so predictably): it always opens the right call, but alone it
 * writes the wrong month for a booking written in words; with a hint it gets bookings right and events wrong.
 */
class ConversionSensitiveStudentTestDouble implements ChatModel {
  readonly model = "conversion-sensitive-student";

  async complete(messages: TeachMessage[], options: CompleteOptions): Promise<ChatCompletion> {
    const prompt = messages[messages.length - 1].content;
    const hinted = prompt.startsWith("Hint: ");
    const task = tasks.find((t) => prompt.endsWith(t.question)) as Task;
    const call = structuredClone(task.solution as ToolcallSolution);
    const kind = toolcallConversionKind(task);
    if (kind === "book_table:month" && !hinted) call.args.date = "2026-13-01";
    if (kind?.startsWith("add_event") && hinted) call.args.date = "2026-13-01";
    const text = formatToolCall(call).slice(0, options.maxTokens);
    return { text, promptTokens: prompt.length, completionTokens: text.length, finishReason: "stop" };
  }
}

describe("measureStrongConversions", () => {
  it("scores telling strong students their conversions kind by kind, and keeps the kinds that gain", async () => {
    const rewarder = new TeachingRewarder({
      student: new ConversionSensitiveStudentTestDouble(),
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
    });
    const scores = await measureStrongConversions(tasks, rewarder, toolcallTeaching, 4);
    const count = (kind: string) => tasks.filter((t) => toolcallConversionKind(t) === kind).length;
    const booking = scores.find((s) => s.kind === "book_table:month");
    assert.ok(booking && booking.students > 0);
    assert.deepEqual(booking, {
      kind: "book_table:month",
      students: count("book_table:month"),
      fixed: count("book_table:month"),
      broken: 0,
      meanReward: booking.meanReward,
      rewardStandardError: booking.rewardStandardError,
      silentMeanReward: 0,
    });
    assert.ok(booking.meanReward > 1, "a fix earns 1 plus the bonus for short teaching");
    // every student fixed: the rewards differ only by the length of the month's name
    assert.ok(
      booking.rewardStandardError > 0 && booking.rewardStandardError < 0.01,
      `${booking.rewardStandardError}`,
    );
    const events = scores.filter((s) => s.kind.startsWith("add_event"));
    assert.ok(events.length > 0);
    for (const s of events) {
      assert.equal(s.students, count(s.kind));
      assert.deepEqual(
        [s.fixed, s.broken, s.meanReward, s.rewardStandardError],
        [0, s.students, -2, 0],
        s.kind,
      );
    }
    assert.deepEqual(
      scores.map((s) => s.kind),
      [...new Set(tasks.map(toolcallConversionKind).filter((k) => k !== null))].sort(),
    );
    assert.deepEqual(kindsWorthTelling(scores), ["book_table:month"]);
  });

  it("keeps silent a kind whose gain is within its standard errors of silence's", () => {
    const score = {
      kind: "book_table:month",
      students: 40,
      fixed: 7,
      broken: 5,
      meanReward: 0.07,
      rewardStandardError: 0.16,
      silentMeanReward: 0,
    };
    assert.deepEqual(kindsWorthTelling([score]), []);
    assert.deepEqual(kindsWorthTelling([score], 0), ["book_table:month"]);
    assert.deepEqual(kindsWorthTelling([{ ...score, rewardStandardError: 0.03 }]), ["book_table:month"]);
  });

  it("leaves out students whose probe opens the wrong call", async () => {
    const wrongTool: ChatModel = {
      model: "wrong-tool-student",
      async complete(messages, options) {
        const task = tasks.find((t) => messages[messages.length - 1].content.endsWith(t.question)) as Task;
        const text = formatToolCall({
          tool: "get_weather",
          args: (task.solution as ToolcallSolution).args,
        }).slice(0, options.maxTokens);
        return { text, promptTokens: 0, completionTokens: text.length, finishReason: "stop" };
      },
    };
    const rewarder = new TeachingRewarder({
      student: wrongTool,
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
    });
    assert.deepEqual(await measureStrongConversions(tasks, rewarder, toolcallTeaching), []);
  });
});
