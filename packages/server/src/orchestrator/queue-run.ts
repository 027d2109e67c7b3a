import { existsSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError } from "@arc/core";
import { loadRecipe, type Recipe } from "@arc/rl";
import { z } from "zod";
import { tenantTaskFamilies } from "../families/task-family-store.ts";
import type { Queryable } from "../store/database.ts";
import { DEFAULT_RECIPE_NAME } from "./default-recipe.ts";
import { productionModel } from "./execute-run.ts";
import { createRun, type RunRecord, tenantRunsDir } from "./run-store.ts";
import { checkTenantRunOverrides } from "./tenant-run-overrides.ts";
import { REPOSITORY_ROOT } from "./train-process.ts";

/** The body of `POST /v1/runs`: a shipped recipe by name and `key=value` overrides. */
export const RunRequest = z
  .object({
    recipe: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,80}$/, `expected a shipped recipe's name, e.g. ${DEFAULT_RECIPE_NAME}`)
      .default(DEFAULT_RECIPE_NAME)
      .describe("a recipe of the repository's recipes/ folder, by name"),
    overrides: z
      .array(z.string().regex(/^[A-Za-z0-9_.]+=.*$/, "expected key=value"))
      .max(50)
      .default([])
      .describe(
        "recipe overrides of tunable keys, each within its cap (TUNABLE_RECIPE_KEYS), e.g. trainer.steps=20, and data.env=<family> to train a task family you registered",
      ),
  })
  .strict();
/** A parsed `POST /v1/runs` body. */
export type RunRequest = z.infer<typeof RunRequest>;

/**
 * Why a recipe cannot be a tenant's run, or null. A tenant's run trains the tenant's production model into a
 * candidate of it: a recipe that trains an adaptive teacher of another model, or a base model from fresh weights,
 * would make a candidate that is not one.
 */
function notATenantRun(recipe: Recipe): string | null {
  if (recipe.teaching) {
    return `it trains an adaptive teacher of the frozen student ${recipe.teaching.student}, not the model it starts from`;
  }
  if (recipe.model.init) return "it trains a base model from fresh weights, not from your production model";
  return null;
}

/**
 * Queues a run of a shipped recipe for a tenant (the orchestrator's workers train it). Overrides are data: only
 * tunable training knobs (TUNABLE_RECIPE_KEYS) and `data.env`, a task family the tenant registered or one of the
 * server's (`checkTenantRunOverrides`), are taken, so a tenant never sets a path or module the trainer would
 * open (the model and datasets are the server's, the reward module the recipe file's), and no more than each key's
 * cap, so one request cannot tie up the shared trainer. Refuses any other key, a value over its cap, a recipe the
 * overrides make invalid (the error names the key and the recipe by its repository path), a recipe that does not
 * train the tenant's model (`notATenantRun`), and a tenant without a production model.
 */
export async function queueRun(
  db: Queryable,
  tenantId: string,
  request: RunRequest,
  options: { artifactsDir: string; trigger: string },
): Promise<RunRecord> {
  const recipePath = `recipes/${request.recipe}.yaml`;
  if (!existsSync(join(REPOSITORY_ROOT, recipePath))) {
    throw new InvalidInputError(`recipe: no shipped recipe "${request.recipe}" (${recipePath})`, {
      field: "recipe",
    });
  }
  const families = await tenantTaskFamilies(db, tenantId);
  checkTenantRunOverrides(request.overrides, families);
  const recipe = await loadRecipe(join(REPOSITORY_ROOT, recipePath), request.overrides, recipePath, families);
  const why = notATenantRun(recipe);
  if (why) {
    throw new InvalidInputError(
      `recipe: ${recipePath} cannot train your model: ${why}; name a recipe that fine-tunes a model, e.g. ${DEFAULT_RECIPE_NAME}`,
      { field: "recipe" },
    );
  }
  const base = await productionModel(db, tenantId);
  return createRun(db, tenantId, {
    trigger: options.trigger,
    recipePath,
    overrides: request.overrides,
    runsDir: tenantRunsDir(options.artifactsDir, tenantId),
    baseModelId: base.id,
  });
}
