import { InvalidInputError } from "@arc/core";
import type { z } from "zod";

/** Turns one environment variable's text into the value its schema field expects; `name` is the variable, for errors. */
export type EnvConverter = (value: string, name: string) => unknown;

/** Numbers as `Number(value)`: text that is not one becomes NaN, which the schema then rejects naming the field. */
export const envNumber: EnvConverter = (value) => Number(value);

/** Switches: `0`, `false`, `no` and `off` (any case) are false, anything else is true. */
export const envFlag: EnvConverter = (value) => !["0", "false", "no", "off"].includes(value.toLowerCase());

/** How a config is read from the environment and how its errors name a field. */
export interface EnvConfigSpec<K extends string> {
  /** What the config is called at the start of an error, e.g. `config` or `failure pipeline`. */
  label: string;
  /** The environment variable of each field. */
  envNames: Record<K, string>;
  /** Converters by field; a field without one gets the variable's text as is. */
  convert?: Partial<Record<K, EnvConverter>>;
  /** Whether each field is also a `--<field>` flag, so errors name both ways of setting it. */
  flags?: boolean;
}

/** The fields whose variables are set in `env`, converted; unset and empty variables are left out so schema defaults apply. */
export function readEnvFields<K extends string>(
  env: NodeJS.ProcessEnv,
  spec: EnvConfigSpec<K>,
): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(spec.envNames) as [K, string][]) {
    const value = env[name];
    if (value === undefined || value === "") continue;
    const convert = spec.convert?.[key];
    raw[key] = convert ? convert(value, name) : value;
  }
  return raw;
}

/**
 * Parses `raw` with `schema`; on failure throws an InvalidInputError for the first problem naming the field, its
 * variable (and flag) and the path inside it: `config port (ARC_PORT or --port): Number must be ...`.
 */
export function parseEnvConfig<S extends z.ZodTypeAny, K extends string>(
  schema: S,
  raw: unknown,
  spec: EnvConfigSpec<K>,
): z.output<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = issue.path[0] as K | undefined;
  if (key === undefined) throw new InvalidInputError(`${spec.label}: ${issue.message}`);
  const setBy = spec.flags ? `${spec.envNames[key]} or --${key}` : spec.envNames[key];
  const at = issue.path.length > 1 ? ` at ${issue.path.slice(1).join(".")}` : "";
  throw new InvalidInputError(`${spec.label} ${key} (${setBy})${at}: ${issue.message}`, {
    field: String(key),
  });
}
