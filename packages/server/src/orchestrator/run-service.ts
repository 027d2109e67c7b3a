import { join } from "node:path";
import { loadRecipe } from "@arc/rl";
import type { Hono } from "hono";
import type { RegistrySetup } from "../failures/failure-pipeline-config.ts";
import { registrySetupFromEnv } from "../failures/failure-pipeline-config.ts";
import type { AuthVariables } from "../http/auth-middleware.ts";
import { runRoutes } from "../http/routes/run-routes.ts";
import type { Database } from "../store/database.ts";
import { recipeFile } from "./execute-run.ts";
import { Orchestrator } from "./orchestrator.ts";
import { type OrchestratorConfigInput, orchestratorConfigFromEnv } from "./orchestrator-config.ts";

/** Training runs of one server process: the orchestrator and the `/v1/runs` routes. */
export interface RunService {
  orchestrator: Orchestrator;
  /** Mount these with `createApp({ tenantRoutes })`. */
  tenantRoutes: { path: string; app: Hono<{ Variables: AuthVariables }> }[];
  start(): void;
  /** Stops looking for work; runs under way stop after their step and go back to the queue. */
  close(): Promise<void>;
}

/**
 * Wires the orchestrator (settings from ARC_ORCHESTRATOR* under `config`) and its routes; runs go to
 * `<home>/artifacts/<tenantId>/runs`. When the orchestrator is on, its recipe is loaded with its overrides now, so a
 * mistake in either stops the start instead of failing every run it starts.
 */
export async function createRunService(options: {
  db: Database;
  home: string;
  maxBodyBytes: number;
  config?: OrchestratorConfigInput;
  /** The tenants' verifiers and solution resolver (default: the module ARC_DETECTORS_MODULE names). */
  setupRegistry?: RegistrySetup;
  env?: NodeJS.ProcessEnv;
}): Promise<RunService> {
  const env = options.env ?? process.env;
  const config = orchestratorConfigFromEnv(env, options.config);
  if (config.enabled) {
    try {
      await loadRecipe(recipeFile(config.recipe), config.overrides, config.recipe);
    } catch (error) {
      throw new Error(
        `orchestrator recipe (ARC_ORCHESTRATOR_RECIPE, ARC_ORCHESTRATOR_OVERRIDES): ${(error as Error).message}`,
      );
    }
  }
  const orchestrator = new Orchestrator({
    db: options.db,
    config,
    artifactsDir: join(options.home, "artifacts"),
    setupRegistry: options.setupRegistry ?? (await registrySetupFromEnv(env)),
    onEvent: (line) => console.error(`orchestrator: ${line}`),
    onError: (error) => console.error(`orchestrator: ${error.message}`),
  });
  const routes = runRoutes({
    db: options.db,
    config: orchestrator.config,
    artifactsDir: orchestrator.artifactsDir,
    maxBodyBytes: options.maxBodyBytes,
  });
  return {
    orchestrator,
    tenantRoutes: [{ path: "/", app: routes }],
    start: () => orchestrator.start(),
    close: () => orchestrator.close(),
  };
}
