import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type DetectorRegistry, InvalidInputError } from "@arc/core";
import { z } from "zod";
import {
  type EnvConfigSpec,
  envFlag,
  envNumber,
  parseEnvConfig,
  readEnvFields,
} from "../config/env-config.ts";

/**
 * Adds a tenant's own detectors, verifiers (by env id) and solution resolvers to its registry. Called once per
 * registry the pipeline builds (each batch of detection and each `PUT /v1/detectors`), after the stored settings.
 */
export type RegistrySetup = (registry: DetectorRegistry, tenantId: string) => void;

/** How the failure pipeline schedules detection. Every field has a default; environment variables override them. */
export const FailurePipelineConfig = z.object({
  quietMs: z
    .number()
    .int()
    .min(0)
    .default(500)
    .describe(
      "A trace is judged once nothing new (a step, feedback) has arrived for it for this long " +
        "(ARC_DETECT_QUIET_MS), so a trace sent in a few quick batches is judged once, whole. Later arrivals " +
        "(late OTLP spans, feedback) have it judged again",
    ),
  batchSize: z
    .number()
    .int()
    .min(1)
    .max(5000)
    .default(200)
    .describe("Traces a worker claims and judges per transaction (ARC_DETECT_BATCH)"),
  pollMs: z
    .number()
    .int()
    .min(1)
    .default(100)
    .describe("How often a worker looks for due traces while it finds some (ARC_DETECT_POLL_MS)"),
  idlePollMs: z
    .number()
    .int()
    .min(1)
    .default(500)
    .describe(
      "The longest a worker waits between looks while it finds none: its wait doubles from pollMs up to this " +
        "(ARC_DETECT_IDLE_POLL_MS), so an idle server does not keep its database busy",
    ),
  busyShare: z
    .number()
    .gt(0)
    .max(1)
    .default(0.25)
    .describe(
      "While the server is answering requests, the most of its time detection takes (ARC_DETECT_BUSY_SHARE): after " +
        "a pass of d ms the worker rests d × (1 / share − 1) ms, at most idlePollMs, so a burst of gateway calls " +
        "is answered first and judged just after. 1 never rests",
    ),
  leaseMs: z
    .number()
    .int()
    .min(1000)
    .default(60_000)
    .describe(
      "How long a claim lasts; work of a worker that died is claimed again after it (ARC_DETECT_LEASE_MS)",
    ),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .default(5)
    .describe(
      "A trace whose judgement throws this many times is judged `unknown` with the error (ARC_DETECT_MAX_ATTEMPTS)",
    ),
  scheduleCheckMs: z
    .number()
    .int()
    .min(100)
    .default(10_000)
    .describe(
      "How often the worker runs the dataset schedules and judge re-calibrations that are due (ARC_SYNTH_CHECK_MS)",
    ),
  enabled: z
    .boolean()
    .default(true)
    .describe("Run the detection worker in this process (ARC_DETECT_WORKER=0 turns it off)"),
});
export type FailurePipelineConfig = z.infer<typeof FailurePipelineConfig>;
export type FailurePipelineConfigInput = z.input<typeof FailurePipelineConfig>;

const envConfig: EnvConfigSpec<keyof FailurePipelineConfig> = {
  label: "failure pipeline",
  envNames: {
    quietMs: "ARC_DETECT_QUIET_MS",
    batchSize: "ARC_DETECT_BATCH",
    pollMs: "ARC_DETECT_POLL_MS",
    idlePollMs: "ARC_DETECT_IDLE_POLL_MS",
    busyShare: "ARC_DETECT_BUSY_SHARE",
    leaseMs: "ARC_DETECT_LEASE_MS",
    maxAttempts: "ARC_DETECT_MAX_ATTEMPTS",
    scheduleCheckMs: "ARC_SYNTH_CHECK_MS",
    enabled: "ARC_DETECT_WORKER",
  },
  convert: {
    quietMs: envNumber,
    batchSize: envNumber,
    pollMs: envNumber,
    idlePollMs: envNumber,
    busyShare: envNumber,
    leaseMs: envNumber,
    maxAttempts: envNumber,
    scheduleCheckMs: envNumber,
    enabled: envFlag,
  },
};

/** Parses a config, naming the field (and its environment variable) of the first problem. */
export function parseFailurePipelineConfig(input: FailurePipelineConfigInput): FailurePipelineConfig {
  return parseEnvConfig(FailurePipelineConfig, input, envConfig);
}

/** The config from environment variables (numbers; ARC_DETECT_WORKER=0|false turns the worker off). */
export function failurePipelineConfigFromEnv(env: NodeJS.ProcessEnv): FailurePipelineConfig {
  return parseFailurePipelineConfig(readEnvFields(env, envConfig));
}

/**
 * The registry setup exported as `setupRegistry` by the module ARC_DETECTORS_MODULE names (a .ts or .js file), so
 * `arc serve` can run a tenant's verifiers without changing Arc's code; undefined when the variable is not set.
 */
export async function registrySetupFromEnv(env: NodeJS.ProcessEnv): Promise<RegistrySetup | undefined> {
  const path = env.ARC_DETECTORS_MODULE;
  if (!path) return undefined;
  const module = (await import(pathToFileURL(resolve(path)).href)) as { setupRegistry?: unknown };
  if (typeof module.setupRegistry !== "function") {
    throw new InvalidInputError(
      `ARC_DETECTORS_MODULE: expected ${path} to export a function setupRegistry(registry, tenantId), got ${typeof module.setupRegistry}`,
      { field: "ARC_DETECTORS_MODULE" },
    );
  }
  return module.setupRegistry as RegistrySetup;
}
