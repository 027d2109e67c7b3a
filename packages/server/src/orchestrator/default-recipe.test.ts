import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { loadRecipe } from "@arc/rl";
import { DEFAULT_RECIPE_FILE } from "./default-recipe.ts";
import { REPOSITORY_ROOT } from "./train-process.ts";

describe("default recipe", () => {
  it("is a shipped recipe that loads and trains a model by DPO", async () => {
    const recipe = await loadRecipe(join(REPOSITORY_ROOT, DEFAULT_RECIPE_FILE));
    assert.equal(recipe.trainer.algorithm, "dpo");
  });
});
