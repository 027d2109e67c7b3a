import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { InvalidInputError, type TaskFamily, type TaskFamilyRegistry, taskFamilies } from "@arc/core";
import { parse } from "yaml";
import type { ZodError } from "zod";
import { FAMILIES_ENV, loadTaskFamilies } from "../families/index.ts";
import { checkVerlRecipe } from "../verl/verl-overrides.ts";
import {
  DEFAULT_ALGORITHM,
  Recipe,
  TEACHER_RUN_ENVS,
  TEACHING_BY_MODE,
  TRAINER_BY_ALGORITHM,
  TUNABLE_RECIPE_KEYS,
} from "./recipe-schema.ts";

/** The algorithms whose trainer block takes `key`. */
function algorithmsWithKey(key: string): string[] {
  return Object.entries(TRAINER_BY_ALGORITHM)
    .filter(([, schema]) => key in schema.shape)
    .map(([algorithm]) => algorithm);
}

/** The teaching modes whose teaching block takes `key`. */
function teachingModesWithKey(key: string): string[] {
  return Object.entries(TEACHING_BY_MODE)
    .filter(([, schema]) => key in schema.shape)
    .map(([mode]) => mode);
}

/**
 * The message of a key the schema does not know: a trainer key of another algorithm, or a teaching key of another
 * teaching mode, says whose it is.
 */
function unknownKeys(key: string, keys: string[], raw: unknown): string {
  if (key === "teaching") return foreignTeachingKeys(keys, raw);
  const algorithm = key === "trainer" ? trainerAlgorithm(raw) : undefined;
  if (!algorithm) return `${key}: unknown key(s) ${keys.join(", ")}`;
  return keys
    .map((name) => {
      const owners = algorithmsWithKey(name);
      return owners.length > 0
        ? `trainer.${name}: not a key of algorithm ${algorithm} (only ${owners.join(" and ")} take it)`
        : `trainer: unknown key(s) ${name}`;
    })
    .join("\n");
}

/** The message of teaching keys the teaching mode (the trainer's algorithm) does not take. */
function foreignTeachingKeys(keys: string[], raw: unknown): string {
  const mode = trainerAlgorithm(raw);
  return keys
    .map((name) => {
      const owners = teachingModesWithKey(name);
      return owners.length > 0
        ? `teaching.${name}: not a key of teaching mode ${mode} (only ${owners.join(" and ")} take it)`
        : `teaching: unknown key(s) ${name}`;
    })
    .join("\n");
}

/** The algorithm a raw recipe's trainer block names (the default when it names none). */
function trainerAlgorithm(raw: unknown): string {
  const trainer = (raw as { trainer?: { algorithm?: unknown } } | null)?.trainer;
  return typeof trainer?.algorithm === "string" ? trainer.algorithm : DEFAULT_ALGORITHM;
}

/** Turns a zod error into one message per issue, each naming the dotted key. */
function describeIssues(error: ZodError, source: string, raw: unknown): string {
  return error.issues
    .map((issue) => {
      const key = issue.path.join(".") || "(root)";
      if (issue.code === "invalid_type")
        return `${source}: ${key}: expected ${issue.expected}, got ${issue.received}`;
      if (issue.code === "unrecognized_keys")
        return unknownKeys(key, issue.keys, raw)
          .split("\n")
          .map((line) => `${source}: ${line}`)
          .join("\n");
      return `${source}: ${key}: ${issue.message}`;
    })
    .join("\n");
}

/**
 * Validates a recipe object; throws an InvalidInputError naming each bad key and the type expected. `data.env` must
 * be a family of `families` (default: the process's registry; a server passes a tenant's, its own families included).
 * A DPO or GRPO recipe without `trainer.workflow` gets the family's: multi-turn episodes for a family with a session.
 */
export function parseRecipe(
  raw: unknown,
  source = "recipe",
  families: Pick<TaskFamilyRegistry, "find" | "envs"> = taskFamilies,
): Recipe {
  const result = Recipe.safeParse(raw ?? {});
  if (!result.success) {
    const first = result.error.issues[0];
    const field =
      first.code === "unrecognized_keys" && ["trainer", "teaching"].includes(first.path.join("."))
        ? `${first.path.join(".")}.${first.keys[0]}`
        : first.path.join(".");
    throw new InvalidInputError(describeIssues(result.error, source, raw), { field });
  }
  const recipe = result.data;
  const family = families.find(recipe.data.env);
  if (!family) {
    throw new InvalidInputError(
      `${source}: data.env: expected one of ${families.envs().join(", ")}, got ${JSON.stringify(recipe.data.env)} (register its family with the recipe key families, arc --family or ${FAMILIES_ENV})`,
      { field: "data.env" },
    );
  }
  if (!family.verify) {
    const name = JSON.stringify(recipe.data.env);
    if (recipe.trainer.algorithm !== "sft" && recipe.reward.kind !== "judge") {
      throw new InvalidInputError(
        `${source}: reward.kind: the ${name} family has no verifier, so only a judge can reward its samples; set reward.kind judge and reward.judge`,
        { field: "reward.kind" },
      );
    }
    if (recipe.data.evalCount > 0) {
      throw new InvalidInputError(
        `${source}: data.evalCount: held-out tasks are judged by a verifier, which the ${name} family has not; set data.evalCount=0 (the validator judges candidates on the tenant's EvalSet)`,
        { field: "data.evalCount" },
      );
    }
  }
  if (recipe.data.rehearsal && recipe.trainer.algorithm !== "sft")
    throw new InvalidInputError(
      `${source}: data.rehearsal: rehearsal answers are learned by SFT only, and this recipe's algorithm is ${recipe.trainer.algorithm}`,
      { field: "data.rehearsal" },
    );
  if (recipe.trainer.algorithm !== "sft") {
    recipe.trainer.workflow ??= family.session ? "multi-turn" : "single-turn";
    checkWorkflow(recipe.trainer.workflow, family, source);
  }
  if (recipe.teaching) checkTeacherRun(recipe, source);
  if (recipe.trainer.backend === "verl") checkVerlRecipe(recipe, source);
  return recipe;
}

/** Refuses a workflow the family cannot run: episodes need its session, and a session's first turn has no verdict. */
function checkWorkflow(workflow: "single-turn" | "multi-turn", family: TaskFamily, source: string): void {
  const name = JSON.stringify(family.env);
  if (workflow === "multi-turn" && !family.session) {
    throw new InvalidInputError(`${source}: trainer.workflow: the ${name} family has no multi-turn session`, {
      field: "trainer.workflow",
    });
  }
  if (workflow === "single-turn" && family.session) {
    throw new InvalidInputError(
      `${source}: trainer.workflow: the ${name} family is multi-turn (its verifier judges whole episodes, never one answer); leave trainer.workflow out or set it to multi-turn`,
      { field: "trainer.workflow" },
    );
  }
}

/** Refuses a teacher run of a family the teaching data and rewards do not know. */
function checkTeacherRun(recipe: Recipe, source: string): void {
  if (!TEACHER_RUN_ENVS.includes(recipe.data.env))
    throw new InvalidInputError(
      `${source}: data.env: teacher runs label and judge teachings of ${TEACHER_RUN_ENVS.join(", ")} tasks only, got ${JSON.stringify(recipe.data.env)}`,
      { field: "data.env" },
    );
}

/** Reads a scalar written on the command line: numbers, booleans, `inf`, else the string itself. */
export function parseOverrideValue(text: string): unknown {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "inf") return "inf";
  if (text !== "" && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/** Keys that name an object's prototype: refused in recipe files and overrides alike. */
const PROTOTYPE_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Throws when `part`, a key at dotted path `at`, names an object's prototype. */
function refusePrototypeKey(part: string, at: string): void {
  if (PROTOTYPE_KEYS.has(part)) {
    throw new InvalidInputError(`${at}: "${part}" is never a recipe key`, { field: at });
  }
}

/** One `key=value` override, parsed: the dotted key, its parts, and the value. */
export interface Override {
  key: string;
  path: string[];
  value: unknown;
}

/** Parses an `a.b.c=value` override; refuses one without `=`, with an empty key part, or with a prototype key. */
export function parseOverride(text: string): Override {
  const eq = text.indexOf("=");
  if (eq <= 0) {
    throw new InvalidInputError(
      `override: expected key=value (e.g. trainer.syncInterval=10), got ${JSON.stringify(text)}`,
      { field: "override" },
    );
  }
  const key = text.slice(0, eq);
  const path = key.split(".");
  for (const part of path) {
    if (part === "") throw new InvalidInputError(`${key}: empty key part`, { field: key });
    refusePrototypeKey(part, key);
  }
  return { key, path, value: parseOverrideValue(text.slice(eq + 1)) };
}

/**
 * Checks the overrides of a tenant's run request: each key must be one of TUNABLE_RECIPE_KEYS and a number no more
 * than its cap. Throws naming the key (and the value and the cap); values the schema refuses are left to it.
 */
export function checkTunableOverrides(overrides: readonly string[]): void {
  for (const override of overrides) {
    const { key, value } = parseOverride(override);
    if (!TUNABLE_RECIPE_KEYS.has(key)) {
      throw new InvalidInputError(
        `overrides: "${key}" is not a key a run request may override; the tunable keys are ${[...TUNABLE_RECIPE_KEYS.keys()].join(", ")}`,
        { field: "overrides" },
      );
    }
    const max = TUNABLE_RECIPE_KEYS.get(key);
    if (typeof max === "number" && typeof value === "number" && value > max) {
      throw new InvalidInputError(
        `overrides: ${key}=${value} is more than a run request may set; at most ${max}`,
        { field: "overrides" },
      );
    }
  }
}

/** A block of a raw recipe: an object that is not an array. */
function isBlock(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A deep copy of parsed YAML whose objects have no prototype; refuses a prototype key, naming its dotted path. */
function withoutPrototypes(value: unknown, at: string): unknown {
  if (Array.isArray(value)) return value.map((item, i) => withoutPrototypes(item, `${at}.${i}`));
  if (!isBlock(value)) return value;
  const copy: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    const path = at ? `${at}.${key}` : key;
    refusePrototypeKey(key, path);
    copy[key] = withoutPrototypes(item, path);
  }
  return copy;
}

/**
 * Applies `a.b.c=value` overrides to a raw recipe object; returns a new object whose blocks have no prototype (the
 * input is not changed).
 */
export function applyOverrides(raw: unknown, overrides: readonly string[]): Record<string, unknown> {
  const root = withoutPrototypes(raw ?? {}, "");
  if (!isBlock(root)) {
    throw new InvalidInputError(
      `recipe: expected a mapping of blocks, got ${Array.isArray(root) ? "a list" : typeof root}`,
      {
        field: "recipe",
      },
    );
  }
  for (const override of overrides) {
    const { key, path, value } = parseOverride(override);
    let node = root;
    for (const part of path.slice(0, -1)) {
      const next = node[part] ?? Object.create(null);
      if (!isBlock(next)) throw new InvalidInputError(`${key}: ${part} is not a block`, { field: key });
      node[part] = next;
      node = next;
    }
    node[path[path.length - 1]] = value;
    // a starting checkpoint given by override replaces the recipe's fresh initialisation
    if (key === "model.path") delete node.init;
  }
  return root;
}

/**
 * Reads a YAML recipe file and applies `key=value` overrides, not yet validated. Errors name the file as `source`
 * (default: its path), and an unreadable file by its error code, so a caller can keep server paths out of them.
 */
export async function readRecipeYaml(
  path: string,
  overrides: readonly string[] = [],
  source = path,
): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new InvalidInputError(
      `${source}: cannot read the recipe (${code === "ENOENT" ? "no such file" : (code ?? "unreadable")})`,
      { field: "recipe" },
    );
  }
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (error) {
    throw new InvalidInputError(`${source}: not valid YAML: ${(error as Error).message}`, {
      field: "recipe",
    });
  }
  return applyOverrides(raw, overrides);
}

/** Reads a YAML recipe, applies `key=value` overrides and validates it (`families` as `parseRecipe`); errors name the file as `source`. */
export async function loadRecipe(
  path: string,
  overrides: readonly string[] = [],
  source = path,
  families?: Pick<TaskFamilyRegistry, "find" | "envs">,
): Promise<Recipe> {
  const raw = await readRecipeYaml(path, overrides, source);
  await registerRecipeFamilies(raw, dirname(resolve(path)), source);
  return parseRecipe(raw, source, families);
}

/**
 * Registers the task-family modules a raw recipe lists under `families`, resolving them against `baseDir`, and
 * rewrites them as absolute paths so the recipe a run saves loads them again from anywhere.
 */
export async function registerRecipeFamilies(
  raw: Record<string, unknown>,
  baseDir: string,
  source = "recipe",
): Promise<void> {
  const listed = raw.families;
  if (listed === undefined) return;
  if (!Array.isArray(listed) || !listed.every((p) => typeof p === "string" && p !== "")) {
    throw new InvalidInputError(`${source}: families: expected a list of module paths`, {
      field: "families",
    });
  }
  raw.families = listed.map((p: string) => resolve(baseDir, p));
  await loadTaskFamilies(raw.families as string[]);
}
