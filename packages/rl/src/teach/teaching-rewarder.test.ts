import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Task } from "@arc/core";
import {
  generateToolcallTasks,
  type ToolcallSolution,
  toolcallConversions,
  ungroundedToolcallConversions,
} from "@arc/core/families";
import {
  TOOLCALL_TEACHING_TEMPLATES,
  toolcallAnswers,
  toolcallTeacherReply,
  verifyToolcallAttempt,
} from "../families/toolcall/toolcall-teaching.ts";
import { HintFollowingStudentTestDouble } from "./__fixtures__/hint-following-student.ts";
import { TeachingRewarder } from "./teaching-rewarder.ts";

const tasks = generateToolcallTasks({ split: "production", seed: 5, count: 30 });
const toolOf = (t: Task) => (t.solution as ToolcallSolution).tool;
const weakTask = tasks.find((t) => toolOf(t) === "book_table")!;
const strongTask = tasks.find((t) => toolOf(t) === "get_weather")!;
// The student confuses booking with calendar events and gets everything else right.
const unguided = (t: Task) => (toolOf(t) === "book_table" ? "add_event" : toolOf(t));

function rewarder(
  student: HintFollowingStudentTestDouble,
  options: Partial<ConstructorParameters<typeof TeachingRewarder>[0]> = {},
) {
  return new TeachingRewarder({
    student,
    verify: verifyToolcallAttempt,
    templates: TOOLCALL_TEACHING_TEMPLATES,
    ...options,
  });
}

describe("TeachingRewarder", () => {
  it("rewards teaching that fixes a weak student, more for the same fix in fewer tokens", async () => {
    const r = rewarder(new HintFollowingStudentTestDouble(tasks, unguided));
    const right = toolcallTeacherReply(weakTask, await r.probe(weakTask)).reply;
    const score = await r.score(weakTask, right);
    assert.equal(score.baselineScore, 0);
    assert.equal(score.taughtScore, 1);
    assert.equal(score.judgement, "weak");
    assert.ok(score.reward > 1, `${score.reward}`);
    const padded = await r.score(
      weakTask,
      right.replace("taken from the request.", "taken from the request, read it slowly and carefully twice."),
    );
    assert.equal(padded.taughtScore, 1);
    assert.ok(padded.reward < score.reward);
  });

  it("punishes teaching that turns a strong student wrong and gives nothing for leaving it alone", async () => {
    const r = rewarder(new HintFollowingStudentTestDouble(tasks, unguided));
    const silent = await r.score(strongTask, "<thinking>Diagnosis: strong</thinking><teaching></teaching>");
    assert.deepEqual([silent.reward, silent.teachingTokens, silent.judgement], [0, 0, "strong"]);
    const harmful = await r.score(
      strongTask,
      "<teaching>Call the tool convert_currency with the arguments amount.</teaching>",
    );
    assert.equal(harmful.baselineScore, 1);
    assert.equal(harmful.taughtScore, 0);
    assert.equal(harmful.reward, -2);
  });

  it("uses the outcome form when the recipe asks for it", async () => {
    const student = new HintFollowingStudentTestDouble(tasks, unguided);
    const r = new TeachingRewarder({
      student,
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
      reward: { form: "outcome", degradationPenalty: -0.5 },
    });
    const harmful = await r.score(strongTask, "<teaching>Call the tool convert_currency.</teaching>");
    assert.equal(harmful.reward, -0.5);
  });

  it("redacts the argument values a task's answersOf names before the student sees the teaching", async () => {
    const r = rewarder(new HintFollowingStudentTestDouble(tasks, unguided), { answersOf: toolcallAnswers });
    const { city } = (strongTask.solution as ToolcallSolution).args as { city: string };
    const leaky = await r.score(strongTask, `<teaching>The city is ${city}.</teaching>`);
    assert.equal(leaky.teaching, "The city is [answer withheld].");
    const unguarded = await rewarder(new HintFollowingStudentTestDouble(tasks, unguided)).score(
      strongTask,
      `<teaching>The city is ${city}.</teaching>`,
    );
    assert.equal(unguarded.teaching, `The city is ${city}.`);
  });

  it("cuts a conversion the request does not support before the student reads the teaching", async () => {
    const r = rewarder(new HintFollowingStudentTestDouble(tasks, unguided), {
      ungroundedClaims: ungroundedToolcallConversions,
    });
    const task = tasks.find((t) =>
      toolcallConversions(t).some((c) => c.includes("month") && !c.startsWith("July")),
    )!;
    const [own] = toolcallConversions(task);
    const score = await r.score(task, `<teaching>${own}; July is month 07.</teaching>`);
    assert.equal(score.teaching, `${own}.`);
  });

  it("with referenceLikelihood, rewards how much likelier the teaching makes the reference, while reporting verdicts", async () => {
    // A named test double for the frozen student's likelihood: a hint naming the tool makes the reference likelier.
    const asked: string[] = [];
    const referenceLikelihood = {
      reference: (task: Task) => `call ${toolOf(task)}`,
      probability: async (messages: { content: string | null }[], reply: string) => {
        asked.push(reply);
        const text = messages.map((m) => m.content ?? "").join("\n");
        return text.includes("book_table") ? 0.6 : text.includes("add_event") ? 0.05 : 0.2;
      },
    };
    const r = rewarder(new HintFollowingStudentTestDouble(tasks, unguided), { referenceLikelihood });
    const helpful = await r.score(weakTask, "<teaching>Call the tool book_table.</teaching>");
    assert.deepEqual(helpful.likelihood, { taught: 0.6, baseline: 0.2 });
    assert.deepEqual([helpful.baselineScore, helpful.taughtScore], [0, 1]);
    const expected = 0.4 * (1 + 100 / (100 + helpful.teachingTokens));
    assert.ok(Math.abs(helpful.reward - expected) < 1e-12, `${helpful.reward} vs ${expected}`);
    const misleading = await r.score(weakTask, "<teaching>Call the tool add_event.</teaching>");
    assert.ok(Math.abs(misleading.reward - -2 * 0.15) < 1e-12, `${misleading.reward}`);
    assert.equal(misleading.taughtScore, 0, "the verdict is the greedy student's, not the likelihood");
    assert.equal(await r.score(weakTask, "<teaching></teaching>").then((s) => s.reward), 0);
    assert.ok(asked.every((reply) => reply === "call book_table"));
    assert.equal(asked.length, 3, "the baseline's likelihood is asked once");
  });

  it("refuses a reference-likelihood reward in the outcome form, which needs verdicts of 0 or 1", () => {
    assert.throws(
      () =>
        rewarder(new HintFollowingStudentTestDouble(tasks, unguided), {
          reward: { form: "outcome" },
          referenceLikelihood: { reference: () => "", probability: async () => 1 },
        }),
      /trainer\.reward\.adaptiveTeaching\.form: a reward on the reference's likelihood needs form 'delta'/,
    );
  });

  it("asks the frozen student once per probe, baseline and distinct teaching", async () => {
    const student = new HintFollowingStudentTestDouble(tasks, unguided);
    const r = rewarder(student);
    const reply = toolcallTeacherReply(weakTask, await r.probe(weakTask)).reply;
    await Promise.all([
      r.probe(weakTask),
      r.score(weakTask, reply),
      r.score(weakTask, reply),
      r.score(weakTask, reply),
    ]);
    assert.equal(student.calls, 3);
  });
});
