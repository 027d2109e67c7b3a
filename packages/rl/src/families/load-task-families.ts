import { readFile } from "node:fs/promises";
import { delimiter, isAbsolute, resolve } from "node:path";
import {
  InvalidInputError,
  jsonTaskFamily,
  type TaskFamily,
  type TaskFamilyRegistry,
  taskFamilies,
} from "@arc/core";
import { familyModuleUrl } from "./family-module-url.ts";

/** The environment variable that lists task-family modules to load (paths separated like PATH). */
export const FAMILIES_ENV = "ARC_FAMILIES";

/** The absolute paths of the family modules this thread has loaded, so worker threads can load them too. */
const loaded = new Set<string>();
/** The family each JSON spec file read so far made: reading a file again registers the same family. */
const specs = new Map<string, TaskFamily>();

/**
 * Imports task-family modules and registers what each exports by default (one family or a list of families); a
 * `.json` path is a family given as data (`JsonFamilySpec`: tools and argument checks, or judge only).
 * Relative paths resolve against `baseDir`. Loading a module twice registers nothing new. Throws an
 * InvalidInputError naming the module when it cannot be imported or does not export a family.
 */
export async function loadTaskFamilies(
  paths: readonly string[],
  options: { baseDir?: string; registry?: TaskFamilyRegistry } = {},
): Promise<TaskFamily[]> {
  const registry = options.registry ?? taskFamilies;
  const families: TaskFamily[] = [];
  for (const path of paths) {
    const file = isAbsolute(path) ? path : resolve(options.baseDir ?? process.cwd(), path);
    const json = file.endsWith(".json");
    const exported = json ? await readFamilySpec(file, path) : await importDefault(file, path);
    if (exported === undefined) {
      throw new InvalidInputError(
        `family module ${path}: expected a default export (a task family or a list of them), found none`,
        { field: "families" },
      );
    }
    for (const family of Array.isArray(exported) ? exported : [exported]) {
      registry.register(family, { source: `family ${json ? "spec" : "module"} ${path}` });
      families.push(family);
    }
    if (registry === taskFamilies) loaded.add(file);
  }
  return families;
}

/** A JSON family spec file as the family it describes. */
async function readFamilySpec(file: string, path: string): Promise<TaskFamily> {
  const known = specs.get(file);
  if (known) return known;
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new InvalidInputError(`family spec ${path}: cannot be read: ${(error as Error).message}`, {
      field: "families",
    });
  }
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`family spec ${path}: not valid JSON: ${(error as Error).message}`, {
      field: "families",
    });
  }
  const family = jsonTaskFamily(spec, `family spec ${path}`);
  specs.set(file, family);
  return family;
}

/** A family module's default export. */
async function importDefault(file: string, path: string): Promise<unknown> {
  try {
    return ((await import(familyModuleUrl(file))) as { default?: unknown }).default;
  } catch (error) {
    throw new InvalidInputError(`family module ${path}: cannot be imported: ${(error as Error).message}`, {
      field: "families",
    });
  }
}

/** The family modules listed in `ARC_FAMILIES`. */
export function familyPathsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env[FAMILIES_ENV] ?? "")
    .split(delimiter)
    .map((p) => p.trim())
    .filter((p) => p !== "");
}

/** Loads the family modules listed in `ARC_FAMILIES` into the process's registry. */
export function loadFamiliesFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<TaskFamily[]> {
  return loadTaskFamilies(familyPathsFromEnv(env));
}

/** The absolute paths of every family module loaded into the process's registry so far. */
export function loadedFamilyModules(): string[] {
  return [...loaded];
}
