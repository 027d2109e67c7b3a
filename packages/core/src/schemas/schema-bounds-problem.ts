import { linearRegExp } from "./linear-regexp.ts";
import { DeadlineExceededError, runWithin } from "./run-within.ts";
import { SCHEMA_BOUNDS } from "./schema-bounds.ts";

/** Where a schema breaks a bound (`path`: the keys inside the schema, empty for the whole of it) and which bound. */
export interface SchemaBoundsProblem {
  path: string[];
  message: string;
}

/** Keywords whose value maps names to subschemas: their keys are names, never keywords. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
/** Keywords whose value is data, not schema. */
const DATA = new Set(["enum", "const", "default", "examples"]);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Each regex a schema holds (`pattern` values, `patternProperties` keys) and where; a problem when nested too deep. */
function patternsOf(schema: unknown): { pattern: string; path: string[] }[] | SchemaBoundsProblem {
  const patterns: { pattern: string; path: string[] }[] = [];
  const stack: { value: unknown; path: string[]; names: boolean }[] = [
    { value: schema, path: [], names: false },
  ];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value, path, names } = item;
    if (typeof value !== "object" || value === null) continue;
    if (path.length >= SCHEMA_BOUNDS.maxSchemaDepth) {
      return {
        path,
        message: `is nested deeper than ${SCHEMA_BOUNDS.maxSchemaDepth} levels, the bound on a schema`,
      };
    }
    for (const [key, child] of Object.entries(value)) {
      const at = [...path, key];
      const keyword = !names && !Array.isArray(value);
      if (keyword && DATA.has(key)) continue;
      if (keyword && key === "pattern" && typeof child === "string")
        patterns.push({ pattern: child, path: at });
      if (keyword && key === "patternProperties" && isObject(child)) {
        for (const name of Object.keys(child)) patterns.push({ pattern: name, path: [...at, name] });
      }
      stack.push({ value: child, path: at, names: keyword && NAME_MAPS.has(key) });
    }
  }
  return patterns;
}

/**
 * Why `schema` is out of SCHEMA_BOUNDS, or null: larger than maxSchemaBytes as JSON, nested deeper than
 * maxSchemaDepth, or holding a pattern longer than maxPatternLength. It compiles nothing.
 */
export function schemaBoundsProblem(schema: unknown): SchemaBoundsProblem | null {
  const patterns = patternsOf(schema);
  if (!Array.isArray(patterns)) return patterns;
  const bytes = new TextEncoder().encode(JSON.stringify(schema) ?? "").length;
  if (bytes > SCHEMA_BOUNDS.maxSchemaBytes) {
    return {
      path: [],
      message: `is ${bytes} bytes as JSON; the bound on a schema is ${SCHEMA_BOUNDS.maxSchemaBytes}`,
    };
  }
  const long = patterns.find((p) => p.pattern.length > SCHEMA_BOUNDS.maxPatternLength);
  if (!long) return null;
  return {
    path: long.path,
    message: `is ${long.pattern.length} characters; the bound on a pattern is ${SCHEMA_BOUNDS.maxPatternLength}`,
  };
}

/**
 * Compiles every pattern of `schemas` in RE2, all of them within SCHEMA_BOUNDS.compileMs, so a pattern RE2 cannot
 * run is named when the schemas are registered rather than when a value is checked. Returns the first problem with
 * the index of its schema (none when the schemas together ran out of time), or null. Each schema must be within
 * schemaBoundsProblem's bounds already.
 */
export function patternsProblem(
  schemas: readonly unknown[],
): (SchemaBoundsProblem & { schema?: number }) | null {
  const all = schemas.flatMap((schema, index) => {
    const patterns = patternsOf(schema);
    return Array.isArray(patterns) ? patterns.map((p) => ({ ...p, schema: index })) : [];
  });
  if (all.length === 0) return null;
  try {
    return runWithin(SCHEMA_BOUNDS.compileMs, () => {
      for (const { pattern, path, schema } of all) {
        try {
          linearRegExp(pattern);
        } catch (error) {
          return { schema, path, message: (error as Error).message };
        }
      }
      return null;
    });
  } catch (error) {
    if (!(error instanceof DeadlineExceededError)) throw error;
    return {
      path: [],
      message: `compiling the patterns took more than ${SCHEMA_BOUNDS.compileMs} ms, the bound on registering schemas`,
    };
  }
}
