import { parseOverride } from "@arc/rl";
import { z } from "zod";
import { DEFAULT_RECIPE_FILE } from "./default-recipe.ts";

/** How the orchestrator decides to train and how many runs a server trains at once. Every field has a default. */
export const OrchestratorConfig = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        "Start runs by itself when failures gather (ARC_ORCHESTRATOR=1). Off by default: a run takes the machine's cores for minutes and trains from the tenant's production model, so a user opts in. Queued runs (POST /v1/runs) are trained either way.",
      ),
    minNewFailures: z
      .number()
      .int()
      .min(1)
      .default(50)
      .describe(
        "Failures assigned to patterns since the tenant's last run that trigger a new one (ARC_ORCHESTRATOR_MIN_FAILURES).",
      ),
    cooldownMs: z
      .number()
      .int()
      .min(0)
      .default(30 * 60_000)
      .describe(
        "Least time between two runs of a tenant, from the last one's creation (ARC_ORCHESTRATOR_COOLDOWN_S, in seconds).",
      ),
    maxParallelJobs: z
      .number()
      .int()
      .min(1)
      .default(1)
      .describe(
        "Runs this server trains at once, all tenants together (ARC_ORCHESTRATOR_MAX_JOBS); each is a child process.",
      ),
    maxCandidatesInFlight: z
      .number()
      .int()
      .min(1)
      .default(1)
      .describe(
        "Candidates of one tenant in flight at once, counting runs queued or training and models in validation, awaiting approval or in a canary (ARC_ORCHESTRATOR_MAX_IN_FLIGHT): the orchestrator starts no run for a tenant at this count, so each candidate is judged before the next is trained.",
      ),
    stopWithinMs: z
      .number()
      .int()
      .min(1000)
      .default(8000)
      .describe(
        "How long a stopping server waits for a run to stop after its step (with a checkpoint) before it kills the trainer; either way the run goes back to the queue and resumes from its last checkpoint.",
      ),
    recipe: z
      .string()
      .min(1)
      .default(DEFAULT_RECIPE_FILE)
      .describe(
        "The recipe of runs the orchestrator starts, relative to the repository root (ARC_ORCHESTRATOR_RECIPE).",
      ),
    overrides: z
      .array(z.string())
      .default([])
      .describe(
        "`key=value` recipe overrides for the runs it starts (ARC_ORCHESTRATOR_OVERRIDES, space-separated).",
      ),
    intervalMs: z.number().int().min(10).default(5000).describe("How often it looks for work."),
    staleMs: z
      .number()
      .int()
      .min(100)
      .default(60_000)
      .describe(
        "A running run whose server has not reported for this long is taken over and resumed from its last checkpoint.",
      ),
    maxAttempts: z
      .number()
      .int()
      .min(1)
      .default(3)
      .describe(
        "Starts plus resumes of one run before it is marked failed (a run that crashes every server).",
      ),
    pollMs: z.number().int().min(10).default(1000).describe("How often a run's files are read for progress."),
    datasetSize: z
      .number()
      .int()
      .min(1)
      .default(256)
      .describe("Rows of the prompt pool, and the cap of the eval and preference sets, a run builds."),
  })
  .strict();
/** The orchestrator's settings (see the field descriptions). */
export type OrchestratorConfig = z.infer<typeof OrchestratorConfig>;
/** Settings as given, defaults not yet applied. */
export type OrchestratorConfigInput = z.input<typeof OrchestratorConfig>;

/**
 * Settings from ARC_ORCHESTRATOR* variables, then `overrides` on top; errors name the variable, and a malformed
 * recipe override (no `=`, an empty key part, a prototype key) is named with it.
 */
export function orchestratorConfigFromEnv(
  env: NodeJS.ProcessEnv,
  overrides: OrchestratorConfigInput = {},
): OrchestratorConfig {
  const raw: Record<string, unknown> = {};
  const number = (name: string, key: string, scale = 1) => {
    const value = env[name];
    if (value === undefined || value === "") return;
    const n = Number(value);
    if (!Number.isFinite(n)) throw new Error(`${name}: expected a number, got "${value}"`);
    raw[key] = Math.round(n * scale);
  };
  if (env.ARC_ORCHESTRATOR !== undefined && env.ARC_ORCHESTRATOR !== "") {
    if (!["0", "1", "true", "false"].includes(env.ARC_ORCHESTRATOR)) {
      throw new Error(`ARC_ORCHESTRATOR: expected 1 or 0, got "${env.ARC_ORCHESTRATOR}"`);
    }
    raw.enabled = env.ARC_ORCHESTRATOR === "1" || env.ARC_ORCHESTRATOR === "true";
  }
  number("ARC_ORCHESTRATOR_MIN_FAILURES", "minNewFailures");
  number("ARC_ORCHESTRATOR_COOLDOWN_S", "cooldownMs", 1000);
  number("ARC_ORCHESTRATOR_MAX_JOBS", "maxParallelJobs");
  number("ARC_ORCHESTRATOR_MAX_IN_FLIGHT", "maxCandidatesInFlight");
  if (env.ARC_ORCHESTRATOR_RECIPE) raw.recipe = env.ARC_ORCHESTRATOR_RECIPE;
  if (env.ARC_ORCHESTRATOR_OVERRIDES)
    raw.overrides = env.ARC_ORCHESTRATOR_OVERRIDES.split(/\s+/).filter(Boolean);
  const parsed = OrchestratorConfig.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`orchestrator ${issue.path.join(".")}: ${issue.message}`);
  }
  const source = overrides.overrides === undefined ? "ARC_ORCHESTRATOR_OVERRIDES" : "orchestrator overrides";
  for (const override of parsed.data.overrides) {
    try {
      parseOverride(override);
    } catch (error) {
      throw new Error(`${source}: ${JSON.stringify(override)}: ${(error as Error).message}`);
    }
  }
  return parsed.data;
}
