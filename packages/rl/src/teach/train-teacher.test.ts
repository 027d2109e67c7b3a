import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  formatToolCall,
  generateToolcallTasks,
  type Task,
  type ToolcallSolution,
  teachingTemplates,
} from "@arc/core";
import {
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  initWeights,
  renderChatExample,
} from "@arc/engine";
import { HintFollowingStudentTestDouble } from "./__fixtures__/hint-following-student.ts";
import { trainEngineReferenceLikelihood } from "./reference-likelihood.ts";
import { teacherMessages } from "./teacher-messages.ts";
import { generateTeachingExamples } from "./teaching-examples.ts";
import { TeachingRewarder } from "./teaching-rewarder.ts";
import { TOOLCALL_TEACHING_TEMPLATES, verifyToolcallAttempt } from "./toolcall-teaching.ts";
import { trainTeacherGrpo, trainTeacherSft } from "./train-teacher.ts";

const tiny = configForSize("tiny");
const tasks = generateToolcallTasks({ split: "production", seed: 7, count: 24 });
const toolOf = (t: Task) => (t.solution as ToolcallSolution).tool;
const unguided = (t: Task) => (toolOf(t) === "book_table" ? "add_event" : toolOf(t));

describe("teacher training", () => {
  it("generates examples of both diagnoses from the student's probes, with the prompt runTeaching sends", async () => {
    const student = new HintFollowingStudentTestDouble(tasks, unguided);
    const examples = await generateTeachingExamples({
      tasks,
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

  it("lowers the SFT loss of a fresh teacher on its teaching examples", async () => {
    const student = new HintFollowingStudentTestDouble(tasks, unguided);
    const examples = await generateTeachingExamples({
      tasks,
      student,
      templates: TOOLCALL_TEACHING_TEMPLATES,
    });
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 1), { learningRate: 3e-3 });
    const losses: number[] = [];
    await trainTeacherSft({
      trainer,
      examples,
      render: renderChatExample,
      steps: 12,
      batchSize: 4,
      seed: 1,
      onStep: (_, m) => {
        losses.push(m.loss);
      },
    });
    assert.equal(losses.length, 12);
    assert.ok(losses.at(-1)! < losses[0] * 0.8, `loss ${losses[0]} -> ${losses.at(-1)}`);
  });

  it("steps GRPO on groups whose rewards differ and syncs the generator to the new policy", async () => {
    // A random teacher writes random text; this student is right after it exactly when its length is
    // even, so rewards differ within groups and every step carries signal.
    const student = new HintFollowingStudentTestDouble(tasks, unguided, (g) => g.length % 2 === 0);
    const rewarder = new TeachingRewarder({
      student,
      verify: verifyToolcallAttempt,
      templates: TOOLCALL_TEACHING_TEMPLATES,
    });
    const weights = initWeights(tiny, 2);
    const trainer = await EmbeddedTrainEngine.create(tiny, weights, { learningRate: 1e-3 });
    const generator = await EmbeddedInferenceEngine.create(tiny, weights);
    const seen: { groups: number; stepped: boolean }[] = [];
    await trainTeacherGrpo({
      generator,
      trainer,
      rewarder,
      tasks,
      steps: 2,
      promptsPerStep: 6,
      seed: 3,
      settings: {
        samplesPerPrompt: 3,
        temperature: 1,
        maxTokens: 16,
        normalization: "grpo",
        clipEpsilon: 0.2,
        klCoef: 0,
      },
      onStep: (_, r) => {
        seen.push({ groups: r.groups, stepped: r.metrics !== null });
        assert.equal(r.scores.flat().length, 18);
        assert.ok(r.ndr >= 0 && r.ndr <= 1);
      },
    });
    assert.equal(seen.length, 2);
    for (const s of seen) assert.equal(s.stepped, s.groups > 0);
    assert.ok(
      seen.every((s) => s.stepped),
      JSON.stringify(seen),
    );
    assert.equal(generator.getVersion(), 2);
  });

  it("finds signal in groups whose verdicts tie when the reward is the student's likelihood of the reference", async () => {
    // This student ignores guidance that names no tool, so the random teacher's text never changes a verdict; the
    // likelihood comes from a real (tiny, random) student's teacher-forced log-probs, which every prompt moves.
    const likelihoodStudent = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 5));
    const settings = {
      samplesPerPrompt: 3,
      temperature: 1,
      maxTokens: 16,
      normalization: "grpo" as const,
      clipEpsilon: 0.2,
      klCoef: 0,
    };
    const run = async (referenceLikelihood?: ReturnType<typeof trainEngineReferenceLikelihood>) => {
      const weights = initWeights(tiny, 2);
      const seen: { groups: number; gain: number | null }[] = [];
      await trainTeacherGrpo({
        generator: await EmbeddedInferenceEngine.create(tiny, weights),
        trainer: await EmbeddedTrainEngine.create(tiny, weights, { learningRate: 1e-3 }),
        rewarder: new TeachingRewarder({
          student: new HintFollowingStudentTestDouble(tasks, unguided),
          verify: verifyToolcallAttempt,
          templates: TOOLCALL_TEACHING_TEMPLATES,
          ...(referenceLikelihood ? { referenceLikelihood } : {}),
        }),
        tasks,
        steps: 2,
        promptsPerStep: 4,
        seed: 3,
        settings,
        onStep: (_, r) => {
          seen.push({ groups: r.groups, gain: r.meanLikelihoodGain });
        },
      });
      return seen;
    };
    const byVerdict = await run();
    assert.deepEqual(byVerdict, [
      { groups: 0, gain: null },
      { groups: 0, gain: null },
    ]);
    const byLikelihood = await run(
      trainEngineReferenceLikelihood(likelihoodStudent, renderChatExample, (t) =>
        formatToolCall(t.solution as ToolcallSolution),
      ),
    );
    assert.ok(
      byLikelihood.every((s) => s.groups === 4 && s.gain !== null && Number.isFinite(s.gain)),
      JSON.stringify(byLikelihood),
    );
    await likelihoodStudent.close();
  });
});
