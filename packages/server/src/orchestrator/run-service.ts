import { join } from "node:path";
import { loadRecipe } from "@arc/rl";
import type { RegistrySetup } from "../failures/failure-pipeline-config.ts";
import { registrySetupFromEnv } from "../failures/failure-pipeline-config.ts";
import type { JudgeUpstreams } from "../judges/tenant-judge.ts";
import type { Database } from "../store/database.ts";
import { recipeFile } from "./execute-run.ts";
import { Orchestrator } from "./orchestrator.ts";
import { type OrchestratorConfigInput, orchestratorConfigFromEnv } from "./orchestrator-config.ts";

/** Training runs of one server process: the orchestrator (serve/ mounts the `/v1/runs` routes). */
export interface RunService {
  orchestrator: Orchestrator;
  start(): void;
  /** Stops looking for work; runs under way stop after their step and go back to the queue. */
  close(): Promise<void>;
}

/**
 * Wires the orchestrator (settings from ARC_ORCHESTRATOR* under `config`); runs go to
 * `<home>/artifacts/<tenantId>/runs`. When the orchestrator is on, its recipe is loaded with its overrides now, so a
 * mistake in either stops the start instead of failing every run it starts.
 */
export async function createRunService(options: {
  db: Database;
  home: string;
  config?: OrchestratorConfigInput;
  /** The tenants' verifiers and solution resolver (default: the module ARC_DETECTORS_MODULE names). */
  setupRegistry?: RegistrySetup;
  /** The upstreams a tenant's judge may run on: it rewards the runs of families with no verifier. */
  judgeUpstreams?: JudgeUpstreams;
  /** Where a training job on a cluster reaches this server's API (its reward module's ARC_URL). */
  publicUrl?: () => string | undefined;
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
    judgeUpstreams: options.judgeUpstreams,
    publicUrl: options.publicUrl,
    onEvent: (line) => console.error(`orchestrator: ${line}`),
    onError: (error) => console.error(`orchestrator: ${error.message}`),
  });
  return {
    orchestrator,
    start: () => orchestrator.start(),
    close: () => orchestrator.close(),
  };
}
