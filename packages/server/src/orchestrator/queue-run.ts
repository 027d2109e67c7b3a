import { existsSync } from "node:fs";
import { join } from "node:path";
import { InvalidInputError } from "@arc/core";
import { loadRecipe } from "@arc/rl";
import { z } from "zod";
import type { Queryable } from "../store/database.ts";
import { productionModel } from "./execute-run.ts";
import { createRun, type RunRecord, tenantRunsDir } from "./run-store.ts";
import { REPOSITORY_ROOT } from "./train-process.ts";

/** The body of `POST /v1/runs`: a shipped recipe by name and `key=value` overrides. */
export const RunRequest = z
  .object({
    recipe: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]{0,80}$/, "expected a shipped recipe's name, e.g. toolcall-dpo")
      .default("toolcall-dpo")
      .describe("a recipe of the repository's recipes/ folder, by name"),
    overrides: z
      .array(z.string().regex(/^[A-Za-z0-9_.]+=.*$/, "expected key=value"))
      .max(50)
      .default([])
      .describe("recipe overrides, e.g. trainer.steps=20"),
  })
  .strict();
/** A parsed `POST /v1/runs` body. */
export type RunRequest = z.infer<typeof RunRequest>;

/** Keys the server sets itself: the base model is the tenant's production model, the data its own datasets. */
const SERVER_KEYS = [/^model\./, /^data\.prompts$/, /^data\.preferences$/];

/**
 * Queues a run of a shipped recipe for a tenant (the orchestrator's workers train it): refuses overrides of the
 * server-set keys (model, training data files: a tenant cannot point the trainer at server paths), a recipe the
 * overrides make invalid (the error names the key), and a tenant without a production model.
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
  for (const override of request.overrides) {
    const key = override.slice(0, override.indexOf("="));
    if (SERVER_KEYS.some((k) => k.test(key))) {
      throw new InvalidInputError(
        `overrides: "${key}" is set by the server (the production model and the tenant's datasets)`,
        { field: "overrides" },
      );
    }
  }
  await loadRecipe(join(REPOSITORY_ROOT, recipePath), request.overrides);
  const base = await productionModel(db, tenantId);
  return createRun(db, tenantId, {
    trigger: options.trigger,
    recipePath,
    overrides: request.overrides,
    runsDir: tenantRunsDir(options.artifactsDir, tenantId),
    baseModelId: base.id,
  });
}
