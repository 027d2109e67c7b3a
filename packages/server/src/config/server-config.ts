import { resolve } from "node:path";
import { InvalidInputError } from "@arc/core";
import { z } from "zod";
import { type EnvConfigSpec, envNumber, parseEnvConfig, readEnvFields } from "./env-config.ts";

/** How `arc serve` runs. Every field has a default; environment variables override them, flags override those. */
export const ServerConfig = z.object({
  home: z
    .string()
    .default(".arc")
    .describe("Where Arc keeps its embedded database, artifacts and credentials (ARC_HOME)."),
  databaseUrl: z
    .string()
    .optional()
    .describe(
      "A PostgreSQL server to use instead of the embedded PGlite, e.g. postgres://user@host/db (DATABASE_URL).",
    ),
  host: z.string().default("127.0.0.1").describe("Interface to listen on (ARC_HOST)."),
  port: z
    .number()
    .int()
    .min(0)
    .max(65535)
    .default(7300)
    .describe("TCP port to listen on; 0 picks a free one (ARC_PORT)."),
  adminKey: z
    .string()
    .min(24, "must be at least 24 characters")
    .optional()
    .describe("An admin key to accept in addition to the one created on first start (ARC_ADMIN_KEY)."),
  maxBodyBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024)
    .describe("Largest request body accepted; larger ones get 413 (ARC_MAX_BODY_BYTES)."),
  requestTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe(
      "Time to receive a request's head and body; past it the request gets 408 and its connection is closed (ARC_REQUEST_TIMEOUT_MS).",
    ),
  queryTimeoutMs: z
    .number()
    .int()
    .positive()
    .default(30_000)
    .describe(
      "Longest an embedded-database statement may hold the database; past it the statement fails and the next one runs (ARC_DB_QUERY_TIMEOUT_MS).",
    ),
  gatewayTraceQueue: z
    .number()
    .int()
    .positive()
    .default(10_000)
    .describe(
      "Most gateway traces waiting for the database; past it the oldest are dropped and counted (ARC_GATEWAY_TRACE_QUEUE).",
    ),
  gatewayModelPoolSize: z
    .number()
    .int()
    .positive()
    .default(8)
    .describe(
      "Most checkpoints the gateway holds loaded in its process; past it the least recently used is let go (ARC_GATEWAY_MODEL_POOL_SIZE).",
    ),
  upstreams: z
    .record(
      z
        .object({
          baseUrl: z.string().url(),
          apiKeyEnv: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "expected an environment variable name")
            .optional(),
          judgeConcurrency: z.number().int().min(1).max(256).optional(),
        })
        .strict(),
    )
    .default({})
    .describe(
      'OpenAI-compatible servers tenants may register models on, by name: JSON {"<name>": {"baseUrl", "apiKeyEnv"?, "judgeConcurrency"?}}; judgeConcurrency: calls a judge on it is sent at once (default 1; raise it for a hosted or GPU-served judge) (ARC_UPSTREAMS).',
    ),
  modelsDir: z
    .string()
    .optional()
    .describe(
      "A folder of shipped checkpoints every tenant may register, e.g. the repo's models/ (ARC_MODELS_DIR).",
    ),
  publicUrl: z
    .string()
    .url()
    .optional()
    .describe(
      "Where training jobs on a cluster reach this server's API, for their rewards (ARC_PUBLIC_URL; default: the address it listens on).",
    ),
});
export type ServerConfig = z.infer<typeof ServerConfig>;

const envConfig: EnvConfigSpec<keyof ServerConfig> = {
  label: "config",
  flags: true,
  envNames: {
    home: "ARC_HOME",
    databaseUrl: "DATABASE_URL",
    host: "ARC_HOST",
    port: "ARC_PORT",
    adminKey: "ARC_ADMIN_KEY",
    maxBodyBytes: "ARC_MAX_BODY_BYTES",
    requestTimeoutMs: "ARC_REQUEST_TIMEOUT_MS",
    queryTimeoutMs: "ARC_DB_QUERY_TIMEOUT_MS",
    gatewayTraceQueue: "ARC_GATEWAY_TRACE_QUEUE",
    gatewayModelPoolSize: "ARC_GATEWAY_MODEL_POOL_SIZE",
    upstreams: "ARC_UPSTREAMS",
    modelsDir: "ARC_MODELS_DIR",
    publicUrl: "ARC_PUBLIC_URL",
  },
  convert: {
    port: envNumber,
    maxBodyBytes: envNumber,
    requestTimeoutMs: envNumber,
    queryTimeoutMs: envNumber,
    gatewayTraceQueue: envNumber,
    gatewayModelPoolSize: envNumber,
    upstreams: (value, name) => {
      try {
        return JSON.parse(value);
      } catch {
        throw new InvalidInputError(
          `config upstreams (${name}): expected JSON {"<name>": {"baseUrl": ..., "apiKeyEnv": ...}}`,
          { field: "upstreams" },
        );
      }
    },
  },
};

/** Config from the environment, then `overrides` on top; errors name the variable or flag. */
export function loadServerConfig(
  env: NodeJS.ProcessEnv,
  overrides: Partial<Record<keyof ServerConfig, unknown>> = {},
) {
  const raw = readEnvFields(env, envConfig);
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) raw[key] = value;
  const config = parseEnvConfig(ServerConfig, raw, envConfig);
  return { ...config, home: resolve(config.home) };
}
