import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { loadRecipe, type RunResult } from "@arc/rl";
import type { ModelVersion } from "../store/model-registry.ts";
import { metricsSummary } from "./execute-run.ts";

/** What registering needs of a client of the Arc API: one authenticated JSON request. */
export interface ApiRequester {
  request<T>(method: string, path: string, body?: unknown): Promise<T>;
}

/**
 * Registers a finished run's last checkpoint as a `candidate` ModelVersion on an Arc server (what `arc train` does
 * when a server is configured), with lineage: run, recipe name and hash, base model, training data files, metrics.
 * The server accepts checkpoints under `<ARC_HOME>/artifacts/<tenantId>/` only: train with `--runs-dir` there.
 */
export async function registerRunCheckpoint(
  client: ApiRequester,
  result: RunResult,
  options: { parentId?: string } = {},
): Promise<ModelVersion> {
  if (!result.lastCheckpoint) throw new Error(`run ${result.runId} wrote no checkpoint to register`);
  const recipePath = join(result.dir, "recipe.yaml");
  const recipe = await loadRecipe(recipePath);
  const recipeHash = `sha256:${createHash("sha256")
    .update(await readFile(recipePath))
    .digest("hex")}`;
  return client.request<ModelVersion>("POST", "/v1/model-versions", {
    name: `${result.runId}/step-${result.step}`,
    status: "candidate",
    ...(options.parentId ? { parentId: options.parentId } : {}),
    artifactDir: join(result.dir, result.lastCheckpoint),
    lineage: {
      runId: result.runId,
      recipe: recipe.name,
      recipeHash,
      baseModel: options.parentId ?? recipe.model.path,
      baseModelPath: recipe.model.path,
      dataFiles: { prompts: recipe.data.prompts ?? null, preferences: recipe.data.preferences ?? null },
    },
    metrics: { ...metricsSummary(result.records), steps: result.step },
  });
}
