import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { checkTunableOverrides, loadRecipe } from "./load-recipe.ts";
import { TUNABLE_RECIPE_KEYS } from "./recipe-schema.ts";

const recipesDir = fileURLToPath(new URL("../../../../recipes/", import.meta.url));

describe("shipped recipes", () => {
  it("validates every recipe under recipes/ and covers SFT, DPO and GRPO", async () => {
    const files = (await readdir(recipesDir)).filter((f) => f.endsWith(".yaml"));
    const algorithms = new Set<string>();
    for (const file of files) algorithms.add((await loadRecipe(`${recipesDir}${file}`)).trainer.algorithm);
    assert.deepEqual([...algorithms].sort(), ["dpo", "grpo", "sft"]);
  });

  it("lets a run request restate any tunable value a shipped recipe sets, and the larger runs its comments suggest", async () => {
    // base-model-*.yaml trains a base model from scratch for the operator (scripts/make-base-models.ts), never a
    // tenant's run, so its data and steps are past a run request's caps
    const files = (await readdir(recipesDir)).filter(
      (f) => f.endsWith(".yaml") && !f.startsWith("base-model-"),
    );
    let commands = 0;
    for (const file of files) {
      const recipe = (await loadRecipe(`${recipesDir}${file}`)) as unknown as Record<
        string,
        Record<string, unknown>
      >;
      const overrides = [...TUNABLE_RECIPE_KEYS.keys()].flatMap((key) => {
        const [block, field] = key.split(".");
        const value = recipe[block]?.[field];
        return value === undefined ? [] : [`${key}=${value}`];
      });
      assert.doesNotThrow(() => checkTunableOverrides(overrides), file);
      const text = await readFile(`${recipesDir}${file}`, "utf8");
      for (const [, command] of text.matchAll(/^#\s+arc train recipes\/\S+\.yaml (.+)$/gm)) {
        assert.doesNotThrow(() => checkTunableOverrides(command.trim().split(/\s+/)), `${file}: ${command}`);
        commands += 1;
      }
    }
    assert.ok(commands >= 3, `${commands} commands with overrides in the recipes' comments`);
  });
});
