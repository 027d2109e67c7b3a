import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadTaskFamilies } from "../families/index.ts";
import { resumeRun, startRun } from "../run/run-training.ts";
import { engineFactory } from "../worker/index.ts";
import { loadRecipe } from "./load-recipe.ts";

const FAMILY = fileURLToPath(new URL("./__fixtures__/rate-convert-family.ts", import.meta.url));
const RECIPES = fileURLToPath(new URL("../../../../recipes/", import.meta.url));

/** Overrides that make a documented recipe take seconds on a multi-turn family: a fresh tiny model, two steps. */
const QUICK = [
  "data.env=rate-convert",
  "data.split=train",
  "data.count=8",
  "data.evalSplit=eval",
  "data.evalCount=2",
  "model.init.size=tiny",
  "trainer.steps=2",
  "trainer.promptsPerStep=2",
  "trainer.samplesPerPrompt=2",
  "trainer.maxTokens=24",
  "trainer.checkpointEvery=2",
  "trainer.evalEvery=2",
  "sftWarmUp.steps=2",
  "sftWarmUp.promptsPerStep=2",
];

describe("the documented recipes on a multi-turn family registered by path", () => {
  it("trains corrections-dpo (SFT warm-up, then semi-online DPO on whole episodes) to the end", async () => {
    await loadTaskFamilies([FAMILY]);
    const recipe = await loadRecipe(join(RECIPES, "corrections-dpo.yaml"), QUICK);
    const runsDir = await mkdtemp(join(tmpdir(), "arc-multi-turn-dpo-"));
    const result = await startRun(recipe, { runsDir, factory: engineFactory });
    assert.equal(result.status, "completed");
    assert.equal(result.records.at(-1)?.step, 2);
    assert.ok(result.records.filter((r) => r.step > 0).every((r) => r.tokens > 0));
    // the family's session made the recipe's DPO sample whole episodes
    assert.equal(recipe.trainer.algorithm === "dpo" && recipe.trainer.workflow, "multi-turn");
  });

  it("trains toolcall-sft (SFT on reference answers) on every turn of its episodes", async () => {
    await loadTaskFamilies([FAMILY]);
    const overrides = QUICK.filter(
      (o) => !o.startsWith("sftWarmUp.") && !o.startsWith("trainer.samplesPerPrompt"),
    );
    const recipe = await loadRecipe(join(RECIPES, "toolcall-sft.yaml"), overrides);
    const runsDir = await mkdtemp(join(tmpdir(), "arc-multi-turn-sft-"));
    const result = await startRun(recipe, { runsDir, factory: engineFactory });
    assert.equal(result.status, "completed");
    assert.equal(typeof result.records.at(-1)?.evalFailureRate, "number");
  });

  it("resumes a GRPO run on it that was stopped during its SFT warm-up", async () => {
    await loadTaskFamilies([FAMILY]);
    const recipe = await loadRecipe(join(RECIPES, "orderdesk-grpo.yaml"), [...QUICK, "sftWarmUp.steps=3"]);
    const runsDir = await mkdtemp(join(tmpdir(), "arc-multi-turn-resume-"));
    const stop = new AbortController();
    const first = await startRun(recipe, {
      runsDir,
      factory: engineFactory,
      signal: stop.signal,
      hooks: { onStep: (record) => (record.step === 1 ? stop.abort() : undefined) },
    });
    assert.equal(first.status, "cancelled");
    assert.ok(existsSync(join(first.dir, "sft-warm-up", "state.json")));
    const resumed = await resumeRun(first.runId, { runsDir, factory: engineFactory });
    assert.equal(resumed.status, "completed");
    assert.equal(resumed.records.at(-1)?.step, 2);
  });
});
