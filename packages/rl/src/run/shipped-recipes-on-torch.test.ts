/**
 * The shipped recipes on the PyTorch engine by configuration alone (`engine.kind=torch`). Every recipe in recipes/
 * takes the engine; those whose paths no other test runs on torch run two steps, cut down to a few prompts, and leave
 * a checkpoint the torch engine wrote: SFT from fresh weights, DPO after an SFT warm-up, multi-turn GRPO on an
 * environment, the judge's SFT and the teacher's SFT against its frozen student. (DPO and GRPO from a checkpoint run
 * on torch in torch-run.test.ts, the teacher's GRPO in teach/teacher-run.test.ts, and `npm run bench:torch` runs
 * toolcall-sft, toolcall-dpo and toolcall-grpo to their held-out failure rates.)
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { torchPython } from "@arc/engine";
import { pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { loadRecipe, readRecipeYaml } from "../recipe/index.ts";
import { engineFactory } from "../worker/index.ts";
import { startRun } from "./run-training.ts";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const RECIPES = join(ROOT, "recipes");
const skip = skipWithout("python", pythonLacks(torchPython(), ["torch", "transformers", "peft"]));

/** A value at a dotted path of a raw recipe, or undefined. */
function at(raw: Record<string, unknown>, path: string): unknown {
  return path.split(".").reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], raw);
}

/** Overrides that cut a recipe down to two steps of a few short prompts, on the torch engine on the CPU. */
function twoStepsOnTorch(raw: Record<string, unknown>): string[] {
  const overrides = [
    "engine.kind=torch",
    "engine.device=cpu",
    "trainer.steps=2",
    "trainer.checkpointEvery=2",
  ];
  const cuts: [string, number | string][] = [
    ["trainer.evalEvery", 2],
    ["trainer.warmupSteps", 0],
    ["trainer.decaySteps", 2],
    ["trainer.promptsPerStep", 2],
    ["trainer.samplesPerPrompt", 2],
    ["trainer.maxTokens", 16],
    ["trainer.trainThreads", 1],
    ["sftWarmUp.steps", 1],
    ["sftWarmUp.promptsPerStep", 2],
    ["data.count", 8],
    ["data.evalCount", 2],
    ["model.init.size", "tiny"],
  ];
  for (const [key, value] of cuts) if (at(raw, key) !== undefined) overrides.push(`${key}=${value}`);
  return overrides;
}

describe("the shipped recipes on the torch engine", { skip }, () => {
  let root = "";
  before(async () => {
    root = await mkdtemp(join(tmpdir(), "arc-shipped-torch-"));
    // the recipes name their models relative to the repository, as `arc train` run from it reads them
    process.chdir(ROOT);
  });
  after(() => rm(root, { recursive: true, force: true }));

  const shipped = readdirSync(RECIPES).filter((f) => f.endsWith(".yaml"));

  it("takes the torch engine in every shipped recipe", async () => {
    for (const file of shipped) {
      const path = join(RECIPES, file);
      const recipe = await loadRecipe(path, twoStepsOnTorch(await readRecipeYaml(path)));
      assert.equal(recipe.engine.kind, "torch", file);
    }
  });

  const untestedElsewhere = [
    "base-model-sft.yaml",
    "corrections-dpo.yaml",
    "orderdesk-grpo.yaml",
    "teacher-sft.yaml",
    "toolcall-judge-sft.yaml",
  ];
  for (const file of untestedElsewhere) {
    it(`runs ${file} for two steps`, async () => {
      assert.ok(shipped.includes(file), `recipes/${file} is shipped`);
      const path = join(RECIPES, file);
      const recipe = await loadRecipe(path, twoStepsOnTorch(await readRecipeYaml(path)));
      const result = await startRun(recipe, { runsDir: join(root, "runs"), factory: engineFactory });
      assert.equal(result.status, "completed", file);
      assert.equal(result.records.at(-1)?.step, 2);
      assert.ok(result.lastCheckpoint, `${file}: a checkpoint`);
      const state = JSON.parse(
        await readFile(join(result.dir, result.lastCheckpoint, "trainer_state.json"), "utf8"),
      );
      assert.equal(state.engine, "torch", `${file}: the torch engine's training state`);
    });
  }
});
