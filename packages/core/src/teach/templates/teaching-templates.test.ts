import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../../errors/index.ts";
import { renderTemplate, TeachingTemplates, teachingTemplates } from "./teaching-templates.ts";

describe("teachingTemplates", () => {
  it("renders the default probe as the question followed by the issue's probe instruction", () => {
    const t = teachingTemplates();
    assert.equal(
      renderTemplate(t.probe, { question: "What is 17 * 3?" }),
      "What is 17 * 3?\n\nBefore solving, briefly describe: 1. what type of problem this is 2. the key concepts or steps needed 3. any potential challenges. Your initial approach (be concise):",
    );
  });

  it("limits the probe to 50 tokens unless overridden", () => {
    assert.equal(teachingTemplates().maxProbeTokens, 50);
    assert.equal(teachingTemplates({ maxProbeTokens: 20 }).maxProbeTokens, 20);
  });

  it("makes the default baseline the guided prompt without its guidance paragraph", () => {
    const t = teachingTemplates();
    const guided = renderTemplate(t.studentWithGuidance, { question: "Q?", teaching: "Hint." });
    assert.equal(
      guided.replace("Guidance from a teacher:\nHint.\n\n", ""),
      renderTemplate(t.baseline, { question: "Q?" }),
    );
  });

  it("keeps the defaults for fields an override leaves out and does not mutate the input", () => {
    const overrides = { probe: "Plan for {question} in one line:" };
    const t = teachingTemplates(overrides);
    assert.equal(t.probe, "Plan for {question} in one line:");
    assert.equal(t.baseline, teachingTemplates().baseline);
    assert.deepEqual(overrides, { probe: "Plan for {question} in one line:" });
  });

  it("rejects a teacher template without {approach}, naming the field and the placeholder", () => {
    assert.throws(
      () => teachingTemplates({ teacherAdaptive: "Teach {question}" }),
      (error: unknown) =>
        error instanceof InvalidInputError &&
        error.field === "templates.teacherAdaptive" &&
        /\{approach\}/.test(error.message),
    );
  });

  it("rejects an unknown template name so a typo is not silently ignored", () => {
    assert.throws(() => teachingTemplates({ probePrompt: "x {question}" } as never), /probePrompt/);
  });

  it("rejects a non-positive probe budget", () => {
    assert.throws(
      () => teachingTemplates({ maxProbeTokens: 0 }),
      /templates\.maxProbeTokens: must be positive/,
    );
  });

  it("describes every field so the config documents itself", () => {
    for (const [name, field] of Object.entries(TeachingTemplates.shape)) {
      assert.ok(field.description && field.description.length > 10, `${name} has no description`);
    }
  });
});

describe("renderTemplate", () => {
  it("does not expand placeholders that appear inside inserted values", () => {
    const out = renderTemplate("{question} / {teaching}", {
      question: "solve {teaching} for x",
      teaching: "T",
    });
    assert.equal(out, "solve {teaching} for x / T");
  });

  it("leaves placeholders without a value and other braces untouched", () => {
    assert.equal(renderTemplate("{question} {x} {{y}}", { question: "Q" }), "Q {x} {{y}}");
  });
});
