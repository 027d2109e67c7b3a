import { readFile } from "node:fs/promises";
import { InvalidInputError } from "@arc/core";
import { parse } from "yaml";
import type { ZodError } from "zod";
import { Recipe } from "./recipe-schema.ts";

/** Turns a zod error into one message per issue, each naming the dotted key. */
function describeIssues(error: ZodError, source: string): string {
  return error.issues
    .map((issue) => {
      const key = issue.path.join(".") || "(root)";
      if (issue.code === "invalid_type")
        return `${source}: ${key}: expected ${issue.expected}, got ${issue.received}`;
      if (issue.code === "unrecognized_keys")
        return `${source}: ${key}: unknown key(s) ${issue.keys.join(", ")}`;
      return `${source}: ${key}: ${issue.message}`;
    })
    .join("\n");
}

/** Validates a recipe object; throws an InvalidInputError naming each bad key and the type expected. */
export function parseRecipe(raw: unknown, source = "recipe"): Recipe {
  const result = Recipe.safeParse(raw ?? {});
  if (!result.success) {
    const first = result.error.issues[0];
    throw new InvalidInputError(describeIssues(result.error, source), { field: first.path.join(".") });
  }
  const recipe = result.data;
  if (recipe.trainer.decoupled && recipe.trainer.temperature !== 1) {
    throw new InvalidInputError(
      `${source}: trainer.decoupled: needs trainer.temperature 1 (the behaviour log-probs must be the policy's own), got temperature ${recipe.trainer.temperature}`,
      { field: "trainer.decoupled" },
    );
  }
  if (recipe.trainer.ppoEpochs > 1 && recipe.trainer.algorithm !== "grpo") {
    throw new InvalidInputError(
      `${source}: trainer.ppoEpochs: only GRPO takes several updates per rollout batch, got ${recipe.trainer.ppoEpochs} with algorithm ${recipe.trainer.algorithm}`,
      { field: "trainer.ppoEpochs" },
    );
  }
  return recipe;
}

/** Reads a scalar written on the command line: numbers, booleans, `inf`, else the string itself. */
export function parseOverrideValue(text: string): unknown {
  if (text === "true") return true;
  if (text === "false") return false;
  if (text === "inf") return "inf";
  if (text !== "" && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/** Applies `a.b.c=value` overrides to a raw recipe object; returns a new object (the input is not changed). */
export function applyOverrides(raw: unknown, overrides: readonly string[]): Record<string, unknown> {
  const root = structuredClone((raw ?? {}) as Record<string, unknown>);
  for (const override of overrides) {
    const eq = override.indexOf("=");
    if (eq <= 0) {
      throw new InvalidInputError(
        `override: expected key=value (e.g. trainer.syncInterval=10), got ${JSON.stringify(override)}`,
        {
          field: "override",
        },
      );
    }
    const path = override.slice(0, eq).split(".");
    let node = root;
    for (const part of path.slice(0, -1)) {
      const next = node[part];
      if (next === undefined) node[part] = {};
      else if (typeof next !== "object" || next === null) {
        throw new InvalidInputError(`${path.join(".")}: ${part} is not a block`, { field: path.join(".") });
      }
      node = node[part] as Record<string, unknown>;
    }
    node[path[path.length - 1]] = parseOverrideValue(override.slice(eq + 1));
  }
  return root;
}

/** Reads a YAML recipe file and applies `key=value` overrides, not yet validated; an unreadable file names its path. */
export async function readRecipeYaml(
  path: string,
  overrides: readonly string[] = [],
): Promise<Record<string, unknown>> {
  let raw: unknown;
  try {
    raw = parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new InvalidInputError(`${path}: cannot read the recipe: ${(error as Error).message}`, {
      field: "recipe",
    });
  }
  return applyOverrides(raw, overrides);
}

/** Reads a YAML recipe, applies `key=value` overrides and validates it. */
export async function loadRecipe(path: string, overrides: readonly string[] = []): Promise<Recipe> {
  return parseRecipe(await readRecipeYaml(path, overrides), path);
}
