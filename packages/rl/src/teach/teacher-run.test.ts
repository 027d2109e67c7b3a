/**
 * Teacher runs through `arc train`'s loop (`startRun` with a recipe's `teaching` block), on tiny models: a teacher
 * learns its labelled teachings by SFT, then trains by GRPO against a frozen student, and the held-out tasks are
 * judged as that student taught by the policy.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { torchPython } from "@arc/engine";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { parseRecipe } from "../recipe/index.ts";
import { writeTinyModel } from "../run/__fixtures__/tiny-model.ts";
import { startRun, TEACHING_DATA_FILE } from "../run/run-training.ts";
import { engineFactory } from "../worker/index.ts";

const noTorch = skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "peft"]));

describe("teacher runs", () => {
  it("learns labelled teachings of the frozen student's probes by SFT, and judges the student it teaches", async () => {
    const root = await mkdtemp(join(tmpdir(), "arc-teacher-sft-"));
    const student = await writeTinyModel(join(root, "student"), 5);
    const recipe = parseRecipe({
      name: "teacher-sft",
      model: { init: { size: "tiny", seed: 2 } },
      teaching: { student, maxProbeTokens: 16, maxSolutionTokens: 24, strongStudentTeaching: "conversions" },
      data: { env: "toolcall", split: "production", count: 24, evalCount: 6 },
      trainer: { algorithm: "sft", steps: 12, promptsPerStep: 4, learningRate: 3e-3, maxTokens: 32 },
    });
    const result = await startRun(recipe, { runsDir: root, factory: engineFactory });
    assert.equal(result.status, "completed");
    const losses = result.records.flatMap((r) => (r.loss === null ? [] : [r.loss]));
    assert.equal(losses.length, 12);
    assert.ok(losses.at(-1)! < losses[0] * 0.8, `loss ${losses[0]} -> ${losses.at(-1)}`);
    const summary = JSON.parse(await readFile(join(result.dir, TEACHING_DATA_FILE), "utf8"));
    // one greedy and one sampled probe per task, plus the synthetic probes of about half of them
    assert.ok(summary.examples >= 48 && summary.examples <= 72, JSON.stringify(summary));
    assert.equal(summary.conversionsTold, "all");
    const judged = result.records.filter((r) => r.evalFailureRate !== undefined);
    assert.deepEqual(
      judged.map((r) => r.step),
      [0, 12],
    );
    for (const r of judged) {
      assert.equal(r.evalFailureRate, 1 - (r.evalAccuracy as number));
      assert.ok(r.extra.evalNdr >= 0 && r.extra.evalNdr <= 1, JSON.stringify(r.extra));
      assert.ok("evalStudentAloneAccuracy" in r.extra && "evalTeachingTokens" in r.extra);
    }
  });

  for (const kind of ["embedded", "torch"] as const)
    it(`trains GRPO on teachings rewarded by the student's likelihood of the reference, on-policy (${kind})`, {
      skip: kind === "torch" && noTorch,
    }, async () => {
      const root = await mkdtemp(join(tmpdir(), "arc-teacher-grpo-"));
      const student = await writeTinyModel(join(root, "student"), 5);
      const recipe = parseRecipe({
        name: "teacher-grpo",
        engine: { kind, device: "cpu" },
        model: { path: await writeTinyModel(join(root, "teacher"), 2) },
        teaching: {
          student,
          maxProbeTokens: 16,
          maxSolutionTokens: 24,
          studentScore: "reference-likelihood",
          reward: { form: "delta" },
        },
        data: { env: "toolcall", split: "production", count: 16, evalCount: 0 },
        trainer: {
          algorithm: "grpo",
          steps: 2,
          promptsPerStep: 4,
          samplesPerPrompt: 3,
          learningRate: 1e-3,
          maxTokens: 16,
          klCoef: 0.1,
        },
      });
      const result = await startRun(recipe, { runsDir: root, factory: engineFactory });
      assert.equal(result.status, "completed");
      const steps = result.records.filter((r) => r.step > 0);
      assert.equal(steps.length, 2);
      for (const r of steps) {
        // a random student's likelihood moves with every teaching, so every group carries signal
        assert.equal(r.used, 4, JSON.stringify(r));
        assert.ok(r.loss !== null && Number.isFinite(r.loss));
        assert.equal(r.staleness, 0);
        assert.ok(Number.isFinite(r.extra.likelihoodGain), JSON.stringify(r.extra));
        assert.ok(r.extra.teachingNdr >= 0 && r.extra.teachingNdr <= 1);
      }
      assert.deepEqual(
        steps.map((r) => r.generatorStep),
        [0, 1],
      );
    });
});
