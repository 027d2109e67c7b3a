import { InvalidInputError } from "../errors/index.ts";
import type { TaskFamily } from "../tasks/task-family.ts";

/** What a family's env id may be: it names files, URLs and dataset rows. */
const ENV_ID = /^[a-z][a-z0-9_-]{0,63}$/;

/**
 * Types a family where it is written (a module's `export default defineTaskFamily({...})`), keeping the literal
 * type so `family.generate` stays callable where the family defines it.
 */
export function defineTaskFamily<const F extends TaskFamily>(family: F): F {
  return family;
}

/**
 * Throws an InvalidInputError naming the field when `value` is not a usable TaskFamily (a module's default
 * export, say); `source` says where it came from.
 */
export function checkTaskFamily(value: unknown, source: string): asserts value is TaskFamily {
  const fail = (field: string, expected: string, got: unknown): never => {
    throw new InvalidInputError(`${source}: ${field}: expected ${expected}, got ${describe(got)}`, { field });
  };
  if (typeof value !== "object" || value === null) fail("(family)", "a task family object", value);
  const family = value as Record<string, unknown>;
  if (typeof family.env !== "string" || !ENV_ID.test(family.env)) {
    fail("env", "an id of lowercase letters, digits, - and _ (at most 64)", family.env);
  }
  for (const key of ["prompt", "reference"]) {
    if (typeof family[key] !== "function") fail(key, "a function", family[key]);
  }
  for (const key of [
    "generate",
    "verify",
    "session",
    "ungroundedClaims",
    "teachingHint",
    "rightApproachHint",
    "partialCredit",
  ]) {
    if (family[key] !== undefined && typeof family[key] !== "function") fail(key, "a function", family[key]);
  }
  for (const key of ["description", "ability", "guidedTemplate"]) {
    if (family[key] !== undefined && typeof family[key] !== "string") fail(key, "a string", family[key]);
  }
  if (family.tools !== undefined) {
    if (!Array.isArray(family.tools)) fail("tools", "a list of tools", family.tools);
    for (const [i, tool] of (family.tools as unknown[]).entries()) {
      const t = tool as Record<string, unknown> | null;
      if (typeof t?.name !== "string" || t.name === "") fail(`tools.${i}.name`, "a tool name", t?.name);
      if (typeof t?.parameters !== "object" || t.parameters === null) {
        fail(`tools.${i}.parameters`, "a JSON schema object", t?.parameters);
      }
    }
  }
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "function") return "a function";
  if (typeof value === "object") return Array.isArray(value) ? "a list" : "an object";
  return JSON.stringify(value) ?? String(value);
}
