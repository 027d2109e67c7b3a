import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../../errors/index.ts";
import { type ArithSolution, generateArithTasks } from "../../families/index.ts";
import { approximateTokenCounter, REDACTION } from "../parse/index.ts";
import { renderTemplate, teachingTemplates } from "../templates/index.ts";
import { ScriptedChatModelTestDouble } from "./__fixtures__/scripted-chat-model.ts";
import { runTeaching, type Verify } from "./run-teaching.ts";

const task = { question: "What is 17 * 3?", solution: 51 };
const verify: Verify = ({ answer }, t) => answer === String(t.solution);
const defaults = teachingTemplates();
const baselinePrompt = renderTemplate(defaults.baseline, { question: task.question });
const WEAK_TEACHING = "The * sign means multiply: split 17 into 10 and 7, multiply each part by 3, then add.";

/** A student that multiplies correctly when strong, and adds unless told to multiply when weak. */
function student(level: "strong" | "weak", settings: { ignoreMaxTokens?: boolean; delayMs?: number } = {}) {
  return new ScriptedChatModelTestDouble(
    (prompt) => {
      if (prompt.includes("Before solving"))
        return level === "strong" ? "Multiplication: 10*3 plus 7*3." : "Addition of the two numbers.";
      if (prompt.includes("Guidance from a teacher") && /multiply/i.test(prompt))
        return "10*3=30, 7*3=21, 30+21=51 <solution>51</solution>";
      return level === "strong" ? "17*3 = 51 <solution>51</solution>" : "17+3 = 20 <solution>20</solution>";
    },
    { model: `student-${level}`, ...settings },
  );
}

/** An adaptive teacher: nothing for a correct approach, full method for a wrong one. */
function adaptiveTeacher(reply?: (prompt: string) => string) {
  return new ScriptedChatModelTestDouble(
    reply ??
      ((prompt) =>
        prompt.includes("Multiplication")
          ? "<thinking>The approach is right.\nDiagnosis: strong</thinking><teaching></teaching>"
          : `<thinking>Adds instead of multiplying.\nDiagnosis: weak</thinking><teaching>${WEAK_TEACHING}</teaching>`),
    { model: "teacher" },
  );
}

describe("runTeaching in adaptive mode", () => {
  it("probes, teaches a weak student in full, and rewards the improvement", async () => {
    const s = student("weak");
    const run = await runTeaching({ student: s, teacher: adaptiveTeacher(), task, mode: "adaptive", verify });
    assert.deepEqual(
      run.phases.map((p) => [p.phase, p.role]),
      [
        ["probe", "student"],
        ["teaching", "teacher"],
        ["solution", "student"],
        ["baseline", "student"],
      ],
    );
    assert.equal(run.approach, "Addition of the two numbers.");
    assert.equal(run.judgement, "weak");
    assert.equal(run.judgementSource, "teacher");
    assert.equal(run.teaching, WEAK_TEACHING);
    assert.ok(run.phases[2].messages[0].content.includes(WEAK_TEACHING));
    assert.equal(run.solution.answer, "51");
    assert.equal(run.baseline?.answer, "20");
    const tokens = approximateTokenCounter.count(WEAK_TEACHING);
    assert.equal(run.teachingTokens, tokens);
    assert.deepEqual(run.outcome, {
      judgement: "weak",
      taughtScore: 1,
      baselineScore: 0,
      teachingTokens: tokens,
      taughtTokens: run.phases[2].completionTokens,
      baselineTokens: run.phases[3].completionTokens,
      completed: true,
    });
    assert.equal(run.reward, 1 + 100 / (100 + tokens));
    assert.deepEqual(run.warnings, []);
  });

  it("gives a strong student no teaching, so it solves with exactly the baseline prompt", async () => {
    const run = await runTeaching({
      student: student("strong"),
      teacher: adaptiveTeacher(),
      task,
      mode: "adaptive",
      verify,
    });
    assert.equal(run.judgement, "strong");
    assert.equal(run.teaching, "");
    assert.equal(run.teachingTokens, 0);
    assert.equal(run.phases[2].messages[0].content, baselinePrompt);
    assert.equal(run.outcome?.taughtScore, 1);
    assert.equal(run.outcome?.baselineScore, 1);
    assert.equal(run.reward, 0);
    assert.deepEqual(
      run.warnings.map((w) => [w.phase, w.kind]),
      [["teaching", "empty_teaching"]],
    );
  });

  it("holds the probe to maxProbeTokens and shows the teacher the student's approach", async () => {
    const s = student("weak");
    const t = adaptiveTeacher();
    await runTeaching({ student: s, teacher: t, task, mode: "adaptive", templates: { maxProbeTokens: 30 } });
    const probeCall = s.calls.find((c) => c.messages[0].content.includes("Before solving"))!;
    assert.equal(probeCall.options.maxTokens, 30);
    assert.equal(probeCall.messages[0].content, renderTemplate(defaults.probe, { question: task.question }));
    assert.ok(t.calls[0].messages[0].content.includes("Addition of the two numbers."));
  });

  it("penalizes teaching that makes a correct student wrong", async () => {
    const confusing = adaptiveTeacher(
      () =>
        "<thinking>Diagnosis: weak</thinking><teaching>Add the numbers; multiplication is not needed.</teaching>",
    );
    const s = new ScriptedChatModelTestDouble((prompt) =>
      prompt.includes("Add the numbers") ? "<solution>20</solution>" : "<solution>51</solution>",
    );
    const run = await runTeaching({ student: s, teacher: confusing, task, mode: "adaptive", verify });
    assert.equal(run.outcome?.taughtScore, 0);
    assert.equal(run.outcome?.baselineScore, 1);
    assert.equal(run.reward, -2);
    const outcomeForm = await runTeaching({
      student: s,
      teacher: confusing,
      task,
      mode: "adaptive",
      verify,
      reward: { form: "outcome", degradationPenalty: -0.5 },
    });
    assert.equal(outcomeForm.reward, -0.5);
  });

  it("cuts out the claims the question does not support before the student reads the teaching", async () => {
    const teacher = adaptiveTeacher(
      () =>
        "<thinking>Diagnosis: weak</thinking><teaching>Multiply 17 by 3; 19 is prime; 17 is prime.</teaching>",
    );
    const s = student("weak");
    const notInQuestion = (question: string, teaching: string) =>
      [...teaching.matchAll(/(\d+) is prime/g)].filter((m) => !question.includes(m[1])).map((m) => m[0]);
    const run = await runTeaching({
      student: s,
      teacher,
      task,
      mode: "adaptive",
      ungroundedClaims: notInQuestion,
    });
    assert.equal(run.teaching, "Multiply 17 by 3; 17 is prime.");
    assert.ok(!run.phases[2].messages[0].content.includes("19"));
    assert.deepEqual(
      run.warnings.filter((w) => w.kind === "ungrounded_claim").map((w) => [w.phase, w.claim]),
      [["teaching", "19 is prime"]],
    );
  });

  it("starts the baseline before the probe so both run concurrently", async () => {
    const s = student("weak");
    await runTeaching({ student: s, teacher: adaptiveTeacher(), task, mode: "adaptive", verify });
    assert.equal(s.calls[0].messages[0].content, baselinePrompt);
    assert.ok(s.calls[1].messages[0].content.includes("Before solving"));
  });

  it("runs without a baseline, outcome or reward when no verifier is given", async () => {
    const run = await runTeaching({
      student: student("weak"),
      teacher: adaptiveTeacher(),
      task,
      mode: "adaptive",
    });
    assert.deepEqual(
      run.phases.map((p) => p.phase),
      ["probe", "teaching", "solution"],
    );
    assert.equal(run.outcome, undefined);
    assert.equal(run.reward, undefined);
  });
});

describe("runTeaching with malformed teacher output", () => {
  it("uses untagged teacher output as teaching and leaves the judgement unknown", async () => {
    const run = await runTeaching({
      student: student("weak"),
      teacher: adaptiveTeacher(() => "Remember that * means you multiply the numbers."),
      task,
      mode: "adaptive",
      verify,
    });
    assert.equal(run.teaching, "Remember that * means you multiply the numbers.");
    assert.equal(run.judgement, "unknown");
    assert.equal(run.outcome?.taughtScore, 1);
    assert.deepEqual(
      run.warnings.map((w) => w.kind),
      ["missing_tag", "missing_tag", "missing_diagnosis"],
    );
  });

  it("never shows the student a leaked answer", async () => {
    const s = student("weak");
    const run = await runTeaching({
      student: s,
      teacher: adaptiveTeacher(
        () => "<thinking>Diagnosis: weak</thinking><teaching>Multiply: the answer is 51.</teaching>",
      ),
      task,
      mode: "adaptive",
      verify,
    });
    assert.equal(run.teaching, `Multiply: the answer is ${REDACTION}.`);
    assert.ok(!run.phases[2].messages[0].content.includes("51"));
    const leak = run.warnings.find((w) => w.kind === "answer_leaked");
    assert.equal(leak?.phase, "teaching");
  });

  it("withholds the answer field of a built-in arith task's solution", async () => {
    const [arith] = generateArithTasks({ split: "eval", seed: 7, count: 1 });
    const { answer } = arith.solution as ArithSolution;
    const run = await runTeaching({
      student: student("weak"),
      teacher: adaptiveTeacher(
        () => `<thinking>Diagnosis: weak</thinking><teaching>You should get ${answer}.</teaching>`,
      ),
      task: arith,
      mode: "adaptive",
    });
    assert.equal(run.teaching, `You should get ${REDACTION}.`);
  });

  it("drops a leaking teaching entirely under the refuse policy and solves unguided", async () => {
    const run = await runTeaching({
      student: student("weak"),
      teacher: adaptiveTeacher(() => "<thinking>Diagnosis: weak</thinking><teaching>It is 51.</teaching>"),
      task,
      mode: "adaptive",
      leakPolicy: "refuse",
    });
    assert.equal(run.teaching, "");
    assert.equal(run.phases[2].messages[0].content, baselinePrompt);
  });

  it("cuts an over-long probe from a backend that ignores maxTokens before the teacher sees it", async () => {
    const rambling = "First I will think about it. ".repeat(30);
    const s = new ScriptedChatModelTestDouble(
      (prompt) => (prompt.includes("Before solving") ? rambling : "<solution>51</solution>"),
      { ignoreMaxTokens: true },
    );
    const t = adaptiveTeacher();
    const run = await runTeaching({ student: s, teacher: t, task, mode: "adaptive" });
    assert.ok(approximateTokenCounter.count(run.approach!) <= 50);
    assert.ok(!t.calls[0].messages[0].content.includes(rambling.trim()));
    assert.deepEqual(
      run.warnings.map((w) => [w.phase, w.kind]),
      [["probe", "probe_truncated"]],
    );
  });

  it("judges a student strong from an adaptive teacher's empty teaching when no diagnosis is stated", async () => {
    const run = await runTeaching({
      student: student("strong"),
      teacher: adaptiveTeacher(() => "<thinking>Looks fine.</thinking><teaching></teaching>"),
      task,
      mode: "adaptive",
    });
    assert.equal(run.judgement, "strong");
    assert.equal(run.judgementSource, "empty-teaching");
    assert.ok(run.warnings.some((w) => w.kind === "missing_diagnosis"));
  });

  it("tells the teacher when the student gave no approach", async () => {
    const s = new ScriptedChatModelTestDouble((prompt) =>
      prompt.includes("Before solving") ? "  " : "<solution>1</solution>",
    );
    const t = adaptiveTeacher();
    const run = await runTeaching({ student: s, teacher: t, task, mode: "adaptive" });
    assert.ok(t.calls[0].messages[0].content.includes("(the student gave no approach)"));
    assert.equal(run.warnings[0].kind, "empty_probe");
  });
});

describe("runTeaching in modes always and off", () => {
  it("always asks for the complete method, even for a strong student", async () => {
    const t = adaptiveTeacher(
      () => `<thinking>Diagnosis: strong</thinking><teaching>${WEAK_TEACHING}</teaching>`,
    );
    const run = await runTeaching({ student: student("strong"), teacher: t, task, mode: "always", verify });
    assert.equal(
      t.calls[0].messages[0].content,
      renderTemplate(defaults.teacherAlways, {
        question: task.question,
        approach: "Multiplication: 10*3 plus 7*3.",
      }),
    );
    assert.equal(run.teaching, WEAK_TEACHING);
    assert.equal(run.judgement, "strong");
  });

  it("skips probe and teacher in mode off and gives no reward", async () => {
    const s = student("weak");
    const run = await runTeaching({ student: s, task, mode: "off", verify });
    assert.deepEqual(
      run.phases.map((p) => p.phase),
      ["solution", "baseline"],
    );
    assert.equal(run.approach, null);
    assert.equal(run.judgement, "unknown");
    assert.equal(run.outcome?.taughtScore, 0);
    assert.equal(run.outcome?.teachingTokens, 0);
    assert.equal(run.reward, undefined);
  });
});

describe("runTeaching with custom templates and system prompts", () => {
  it("uses overridden templates and sends system messages when configured", async () => {
    const s = student("weak");
    const t = adaptiveTeacher();
    await runTeaching({
      student: s,
      teacher: t,
      task,
      mode: "adaptive",
      templates: {
        probe: "{question} Before solving: plan?",
        studentSystem: "You are terse.",
        teacherSystem: "Teach well.",
      },
    });
    assert.deepEqual(s.calls[0].messages, [
      { role: "system", content: "You are terse." },
      { role: "user", content: "What is 17 * 3? Before solving: plan?" },
    ]);
    assert.equal(t.calls[0].messages[0].content, "Teach well.");
  });
});

describe("runTeaching errors", () => {
  it("rejects adaptive mode without a teacher", async () => {
    await assert.rejects(
      runTeaching({ student: student("weak"), task, mode: "adaptive" }),
      /teacher: mode adaptive needs a teacher/,
    );
  });

  it("rejects an unknown mode and an empty question", async () => {
    await assert.rejects(
      runTeaching({ student: student("weak"), task, mode: "sometimes" as never }),
      /mode: expected one of adaptive, always, off, got sometimes/,
    );
    await assert.rejects(
      runTeaching({ student: student("weak"), task: { question: " " }, mode: "off" }),
      InvalidInputError,
    );
  });

  it("rejects a bad reward config before calling any model", async () => {
    const s = student("weak");
    await assert.rejects(
      runTeaching({
        student: s,
        teacher: adaptiveTeacher(),
        task,
        mode: "adaptive",
        reward: { degradationPenalty: 3 },
      }),
      /degradationPenalty/,
    );
    assert.equal(s.calls.length, 0);
  });

  it("rejects a ChatModel result without token counts, naming the role and field", async () => {
    const broken = { complete: async () => ({ text: "x" }) as never };
    await assert.rejects(
      runTeaching({ student: broken, task, mode: "off" }),
      /student\.complete\(\) returned promptTokens undefined; expected a non-negative integer/,
    );
  });

  it("rejects a verifier score outside [0, 1]", async () => {
    await assert.rejects(
      runTeaching({ student: student("weak"), task, mode: "off", verify: () => 2 }),
      /verify returned 2/,
    );
  });

  it("stops when the caller aborts", async () => {
    const controller = new AbortController();
    const pending = runTeaching({
      student: student("weak", { delayMs: 1000 }),
      teacher: adaptiveTeacher(),
      task,
      mode: "adaptive",
      signal: controller.signal,
    });
    controller.abort(new Error("caller gave up"));
    await assert.rejects(pending, /caller gave up/);
  });
});
