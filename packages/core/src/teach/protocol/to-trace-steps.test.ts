import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Trace } from "../../trace/index.ts";
import { ScriptedChatModelTestDouble } from "./__fixtures__/scripted-chat-model.ts";
import { runTeaching } from "./run-teaching.ts";
import { toTraceSteps } from "./to-trace-steps.ts";

describe("toTraceSteps", () => {
  it("turns every phase into a valid llm step with messages, output, usage and teaching metadata", async () => {
    const student = new ScriptedChatModelTestDouble(
      (p) => (p.includes("Before solving") ? "Multiply." : "<solution>51</solution>"),
      { model: "student-1" },
    );
    const teacher = new ScriptedChatModelTestDouble(
      () => "<thinking>Diagnosis: weak</thinking><teaching>Split 17 into 10 and 7.</teaching>",
    );
    const run = await runTeaching({
      student,
      teacher,
      task: { question: "What is 17 * 3?", solution: 51 },
      mode: "adaptive",
      verify: ({ answer }) => answer === "51",
    });
    const steps = toTraceSteps(run, { idPrefix: "tr-1.teach", parentId: "tr-1.root" });
    const trace = Trace.parse({ id: "tr-1", startedAt: new Date().toISOString(), steps });
    assert.deepEqual(
      trace.steps.map((s) => [s.id, s.name, s.kind, s.parentId]),
      [
        ["tr-1.teach.probe", "teach.probe", "llm", "tr-1.root"],
        ["tr-1.teach.teaching", "teach.teaching", "llm", "tr-1.root"],
        ["tr-1.teach.solution", "teach.solution", "llm", "tr-1.root"],
        ["tr-1.teach.baseline", "teach.baseline", "llm", "tr-1.root"],
      ],
    );
    const teachingStep = trace.steps[1];
    assert.equal(teachingStep.llm?.output?.content, run.phases[1].output);
    assert.equal(teachingStep.llm?.usage?.completionTokens, run.phases[1].completionTokens);
    assert.equal(teachingStep.llm?.params?.max_tokens, 1024);
    assert.equal(trace.steps[0].llm?.modelRequested, "student-1");
    assert.equal(trace.steps[0].llm?.params?.max_tokens, 50);
    assert.deepEqual(teachingStep.metadata?.teaching, {
      phase: "teaching",
      role: "teacher",
      mode: "adaptive",
      judgement: "weak",
      teachingTokens: run.teachingTokens,
      warnings: [],
    });
  });
});
