import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type ChatModel, formatToolCall, parseToolCall, type Task } from "@arc/core";
import { generateToolcallTasks, type ToolcallSolution } from "@arc/core/families";
import { rightApproachHint } from "../data/sft-examples.ts";
import { ReferenceToolcallTeacher } from "../families/toolcall/reference-toolcall-teacher.ts";
import {
  TOOLCALL_TEACHING_TEMPLATES,
  toolcallAnswers,
  verifyToolcallAttempt,
} from "../families/toolcall/toolcall-teaching.ts";
import { HintFollowingStudentTestDouble } from "./__fixtures__/hint-following-student.ts";
import { evaluateTeaching } from "./evaluate-teaching.ts";

const tasks = generateToolcallTasks({ split: "production", seed: 11, count: 40 });
const toolOf = (t: Task) => (t.solution as ToolcallSolution).tool;
const unguided = (t: Task) => (toolOf(t) === "book_table" ? "add_event" : toolOf(t));

describe("evaluateTeaching", () => {
  it("measures an adaptive teacher that fixes weak students, never degrades, and says less to strong ones", async () => {
    const student = new HintFollowingStudentTestDouble(tasks, unguided);
    const common = {
      student,
      tasks,
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
      completed: (text: string) => parseToolCall(text).ok,
    };
    const alone = await evaluateTeaching({ ...common, mode: "off" });
    const taught = await evaluateTeaching({
      ...common,
      mode: "adaptive",
      teacher: new ReferenceToolcallTeacher(tasks),
    });
    const booking = tasks.filter((t) => toolOf(t) === "book_table").length;
    assert.ok(booking > 0);
    assert.equal(alone.overall.taughtAccuracy, 1 - booking / tasks.length);
    assert.equal(taught.overall.taughtAccuracy, 1);
    assert.equal(taught.overall.ndr, 1);
    assert.equal(taught.overall.completionRate, 1);
    assert.ok((taught.overall.tes ?? 0) > 0);
    const strong = taught.byJudgement.get("strong");
    const weak = taught.byJudgement.get("weak");
    assert.equal(weak?.interactions, booking);
    assert.equal(strong?.meanTeachingTokens, 0, "strong students hear nothing by default");
    // told every request's conversions, strong students hear only those ("March is month 03"), most nothing
    const withConversions = await evaluateTeaching({
      ...common,
      mode: "adaptive",
      teacher: new ReferenceToolcallTeacher(tasks, "all"),
    });
    assert.equal(withConversions.overall.ndr, 1);
    const heard = withConversions.byJudgement.get("strong")?.meanTeachingTokens ?? Number.NaN;
    assert.ok(heard > 0 && heard < (weak?.meanTeachingTokens ?? 0) / 2, `strong students heard ${heard}`);
    const silent = withConversions.outcomes.filter((o) => o.teachingTokens === 0).length;
    assert.ok(silent >= tasks.filter((t) => rightApproachHint(t) === "").length - booking);
  });

  it("withholds the argument values answersOf names from the student", async () => {
    const leaking: ChatModel = {
      model: "leaking-teacher",
      async complete(messages) {
        const task = tasks.find((t) => messages.at(-1)?.content.includes(t.question));
        const text = `<teaching>Write ${formatToolCall(task?.solution as ToolcallSolution)}</teaching>`;
        return { text, promptTokens: 0, completionTokens: text.length, finishReason: "stop" };
      },
    };
    const result = await evaluateTeaching({
      student: new HintFollowingStudentTestDouble(tasks, unguided),
      teacher: leaking,
      mode: "always",
      tasks: tasks.slice(0, 5),
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
      answersOf: toolcallAnswers,
    });
    for (const [i, run] of result.runs.entries()) {
      assert.ok(run.warnings.some((w) => w.kind === "answer_leaked"));
      // one- and two-character values ("c", "7") count only where presented as the result
      for (const value of toolcallAnswers(tasks[i]).filter((v) => v.length > 2))
        assert.ok(!run.teaching.includes(value), run.teaching);
    }
  });
});
