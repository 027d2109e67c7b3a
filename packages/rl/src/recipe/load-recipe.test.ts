import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { InvalidInputError } from "@arc/core";
import { applyOverrides, loadRecipe, parseRecipe } from "./load-recipe.ts";

async function recipeFile(text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "arc-recipe-")), "r.yaml");
  await writeFile(path, text);
  return path;
}

describe("recipes", () => {
  it("fills every block with defaults", () => {
    const recipe = parseRecipe({});
    assert.equal(recipe.trainer.algorithm, "dpo");
    assert.equal(recipe.trainer.syncInterval, 1);
    assert.equal(recipe.data.env, "toolcall");
    assert.equal(recipe.reward.kind, "partial");
  });

  it("reads YAML and applies key=value overrides over it", async () => {
    const path = await recipeFile("trainer:\n  algorithm: dpo\n  syncInterval: 1\n  beta: 0.2\n");
    const recipe = await loadRecipe(path, [
      "trainer.syncInterval=10",
      "trainer.syncReference=true",
      "data.env=arith",
    ]);
    assert.equal(recipe.trainer.syncInterval, 10);
    assert.equal(recipe.trainer.syncReference, true);
    assert.equal(recipe.trainer.beta, 0.2);
    assert.equal(recipe.data.env, "arith");
  });

  it("accepts inf as an offline sync interval", async () => {
    const recipe = await loadRecipe(await recipeFile("{}"), ["trainer.syncInterval=inf"]);
    assert.equal(recipe.trainer.syncInterval, "inf");
  });

  it("names the key and the expected type of a bad value", async () => {
    const path = await recipeFile("trainer:\n  steps: many\n");
    await assert.rejects(loadRecipe(path), (error: unknown) => {
      assert.ok(InvalidInputError.isInstance(error));
      assert.match((error as Error).message, /trainer\.steps: expected number, got string/);
      return true;
    });
  });

  it("rejects an unknown key and a malformed override", async () => {
    assert.throws(
      () => parseRecipe({ trainer: { sync_interval: 3 } }),
      /trainer: unknown key\(s\) sync_interval/,
    );
    assert.throws(() => applyOverrides({}, ["trainer.steps"]), /expected key=value/);
  });

  it("does not change the object it overrides", () => {
    const raw = { trainer: { steps: 5 } };
    applyOverrides(raw, ["trainer.steps=9"]);
    assert.equal(raw.trainer.steps, 5);
  });

  it("rejects the decoupled objective with a sampling temperature other than 1", () => {
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "grpo", decoupled: true, temperature: 0.7 } }),
      /trainer\.decoupled: needs trainer\.temperature 1/,
    );
  });

  it("takes several updates per rollout batch for GRPO only", () => {
    assert.equal(parseRecipe({ trainer: { algorithm: "grpo", ppoEpochs: 2 } }).trainer.ppoEpochs, 2);
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "dpo", ppoEpochs: 2 } }),
      /trainer\.ppoEpochs: only GRPO takes several updates per rollout batch, got 2 with algorithm dpo/,
    );
    assert.throws(() => parseRecipe({ trainer: { ppoEpochs: 0 } }), /trainer\.ppoEpochs/);
  });
});
