import assert from "node:assert/strict";
import { readdir } from "node:fs/promises";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { loadRecipe } from "./load-recipe.ts";

const recipesDir = fileURLToPath(new URL("../../../../recipes/", import.meta.url));

describe("shipped recipes", () => {
  it("validates every recipe under recipes/ and covers SFT, DPO and GRPO", async () => {
    // teacher-*.yaml are teacher-training recipes, validated by teach/teacher-recipe.test.ts.
    const files = (await readdir(recipesDir)).filter((f) => f.endsWith(".yaml") && !f.startsWith("teacher-"));
    const algorithms = new Set<string>();
    for (const file of files) algorithms.add((await loadRecipe(`${recipesDir}${file}`)).trainer.algorithm);
    assert.deepEqual([...algorithms].sort(), ["dpo", "grpo", "sft"]);
  });
});
