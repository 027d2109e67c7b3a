import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadTeacherRecipe } from "./teacher-recipe.ts";

const recipesDir = fileURLToPath(new URL("../../../../recipes/", import.meta.url));

describe("teacher recipes", () => {
  it("validates the shipped SFT and GRPO teacher recipes, GRPO starting from the SFT output", async () => {
    const sft = await loadTeacherRecipe(join(recipesDir, "teacher-sft.yaml"));
    const grpo = await loadTeacherRecipe(join(recipesDir, "teacher-grpo.yaml"));
    assert.equal(sft.stage, "sft");
    assert.equal(grpo.stage, "grpo");
    assert.equal(grpo.teacher.path, sft.out);
    assert.equal(grpo.trainer.reward.adaptiveTeaching.degradationMultiplier, 2);
    assert.equal(sft.teaching.strongStudentTeaching, "measured");
    assert.equal(sft.trainer.reward.studentScore, "verdict");
    assert.equal(grpo.trainer.reward.studentScore, "reference-likelihood");
  });

  it("names the reward form when the student's likelihood is asked for with a form that needs verdicts", async () => {
    const path = join(recipesDir, "teacher-grpo.yaml");
    await assert.rejects(
      loadTeacherRecipe(path, ["trainer.reward.adaptiveTeaching.form=outcome"]),
      /trainer\.reward\.adaptiveTeaching\.form: studentScore 'reference-likelihood' needs form 'delta'/,
    );
    await assert.rejects(
      loadTeacherRecipe(path, ["trainer.reward.studentScore=likelihood"]),
      /trainer\.reward\.studentScore/,
    );
  });

  it("applies key=value overrides and names a bad key with what was expected", async () => {
    const path = join(recipesDir, "teacher-grpo.yaml");
    const overridden = await loadTeacherRecipe(path, [
      "trainer.reward.studentScore=verdict",
      "trainer.reward.adaptiveTeaching.form=outcome",
      "trainer.steps=3",
      "trainer.decaySteps=2",
      "trainer.minLearningRate=0.00001",
    ]);
    assert.equal(overridden.trainer.reward.adaptiveTeaching.form, "outcome");
    assert.equal(overridden.trainer.steps, 3);
    assert.equal(overridden.trainer.decaySteps, 2);
    assert.equal(overridden.trainer.minLearningRate, 1e-5);
    await assert.rejects(loadTeacherRecipe(path, ["trainer.decaySteps=1.5"]), /trainer\.decaySteps/);
    for (const setting of ["none", "conversions", "measured"])
      assert.equal(
        (await loadTeacherRecipe(path, [`teaching.strongStudentTeaching=${setting}`])).teaching
          .strongStudentTeaching,
        setting,
      );
    await assert.rejects(
      loadTeacherRecipe(path, ["teaching.strongStudentTeaching=hints"]),
      /teaching\.strongStudentTeaching/,
    );
    await assert.rejects(
      loadTeacherRecipe(path, ["trainer.reward.adaptiveTeaching.degradationPenalty=2"]),
      /teacher-grpo\.yaml: .*trainer\.reward\.adaptiveTeaching\.degradationPenalty: must be <= 0/,
    );
    const dir = await mkdtemp(join(tmpdir(), "teacher-recipe-"));
    await writeFile(join(dir, "r.yaml"), "stage: sft\n");
    await assert.rejects(loadTeacherRecipe(join(dir, "r.yaml")), /out/);
  });
});
