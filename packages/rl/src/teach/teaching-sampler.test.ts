import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { formatToolCall, type Task, teachingTemplates } from "@arc/core";
import { generateToolcallTasks, type ToolcallSolution } from "@arc/core/families";
import {
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  initWeights,
  renderChatExample,
} from "@arc/engine";
import {
  TOOLCALL_TEACHING_TEMPLATES,
  toolcallTeaching,
  verifyToolcallAttempt,
} from "../families/toolcall/toolcall-teaching.ts";
import { HintFollowingStudentTestDouble } from "./__fixtures__/hint-following-student.ts";
import { trainEngineReferenceLikelihood } from "./reference-likelihood.ts";
import { teacherMessages } from "./teacher-messages.ts";
import { generateTeachingExamples } from "./teaching-examples.ts";
import { TeachingRewarder } from "./teaching-rewarder.ts";
import { teachingSampler } from "./teaching-sampler.ts";

const tiny = configForSize("tiny");
const tasks = generateToolcallTasks({ split: "production", seed: 7, count: 24 });
const toolOf = (t: Task) => (t.solution as ToolcallSolution).tool;
const unguided = (t: Task) => (toolOf(t) === "book_table" ? "add_event" : toolOf(t));

describe("teacher rollouts", () => {
  it("generates examples of both diagnoses from the student's probes, with the prompt runTeaching sends", async () => {
    const student = new HintFollowingStudentTestDouble(tasks, unguided);
    const examples = await generateTeachingExamples({
      tasks,
      teaching: toolcallTeaching,
      student,
      templates: TOOLCALL_TEACHING_TEMPLATES,
      seed: 1,
    });
    const templates = teachingTemplates(TOOLCALL_TEACHING_TEMPLATES);
    for (const e of examples) {
      assert.deepEqual(e.messages, teacherMessages(templates, "adaptive", e.task.question, e.approach));
      const opensOwnCall = formatToolCall(e.task.solution as ToolcallSolution).startsWith(e.approach);
      if (e.source === "student") assert.equal(opensOwnCall, toolOf(e.task) !== "book_table");
      assert.equal(e.diagnosis, opensOwnCall ? "strong" : "weak", `${e.source} probe ${e.approach}`);
    }
    const fromStudent = examples.filter((e) => e.source === "student");
    assert.equal(fromStudent.length, tasks.length * 2);
    assert.ok(examples.some((e) => e.diagnosis === "strong") && examples.some((e) => e.diagnosis === "weak"));
  });

  it("samples G teachings per task, rewards each by the student it teaches, and reports their NDR", async () => {
    // A random teacher writes random text; this student is right after it exactly when its length is
    // even, so rewards differ within groups.
    const student = new HintFollowingStudentTestDouble(tasks, unguided, (g) => g.length % 2 === 0);
    const rewarder = new TeachingRewarder({
      student,
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
    });
    const generator = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 2));
    const batch = tasks.slice(0, 6);
    const { groups, extra } = await teachingSampler(rewarder)(generator, batch, {
      n: 3,
      temperature: 1,
      maxTokens: 16,
      seedOf: () => 3,
    });
    assert.deepEqual(
      groups.map((g) => g.task.id),
      batch.map((t) => t.id),
    );
    for (const group of groups) {
      assert.equal(group.samples.length, 3);
      const scores = await Promise.all(group.samples.map((s) => rewarder.score(group.task, s.text)));
      assert.deepEqual(
        group.rewards,
        scores.map((s) => s.reward),
      );
      assert.deepEqual(
        group.passed,
        scores.map((s) => s.taughtScore === 1),
      );
    }
    assert.ok(
      groups.some((g) => new Set(g.rewards).size > 1),
      "some group carries signal",
    );
    assert.ok(extra && extra.teachingNdr >= 0 && extra.teachingNdr <= 1, JSON.stringify(extra));
    assert.equal(extra?.likelihoodGain, undefined);
  });

  it("finds signal in groups whose verdicts tie when the reward is the student's likelihood of the reference", async () => {
    // This student ignores guidance that names no tool, so the random teacher's text never changes a verdict; the
    // likelihood comes from a real (tiny, random) student's teacher-forced log-probs, which every prompt moves.
    const likelihoodStudent = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 5));
    const run = async (referenceLikelihood?: ReturnType<typeof trainEngineReferenceLikelihood>) => {
      const sample = teachingSampler(
        new TeachingRewarder({
          student: new HintFollowingStudentTestDouble(tasks, unguided),
          verify: verifyToolcallAttempt,
          templates: TOOLCALL_TEACHING_TEMPLATES,
          ...(referenceLikelihood ? { referenceLikelihood } : {}),
        }),
      );
      const generator = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 2));
      const { groups, extra } = await sample(generator, tasks.slice(0, 4), {
        n: 3,
        temperature: 1,
        maxTokens: 16,
        seedOf: () => 3,
      });
      return {
        informative: groups.filter((g) => new Set(g.rewards).size > 1).length,
        gain: extra?.likelihoodGain ?? null,
      };
    };
    const byVerdict = await run();
    assert.deepEqual(byVerdict, { informative: 0, gain: null });
    const byLikelihood = await run(
      trainEngineReferenceLikelihood(likelihoodStudent, renderChatExample, (t) =>
        formatToolCall(t.solution as ToolcallSolution),
      ),
    );
    assert.ok(
      byLikelihood.informative === 4 && byLikelihood.gain !== null && Number.isFinite(byLikelihood.gain),
      JSON.stringify(byLikelihood),
    );
    await likelihoodStudent.close();
  });
});
