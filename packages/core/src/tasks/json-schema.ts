import { type LinearRegExp, linearRegExp, SCHEMA_BOUNDS } from "../schemas/index.ts";

/**
 * The subset of JSON Schema the built-in tools use: enough to describe OpenAI-style tool parameters
 * (object, string, number, integer, boolean, enum, required, additionalProperties, bounds, pattern).
 */
export interface JsonSchema {
  type: "object" | "string" | "number" | "integer" | "boolean";
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  enum?: (string | number)[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  /** A regex in RE2 syntax, matched in linear time. */
  pattern?: string;
}

/** One way a value breaks its schema; `path` is dotted from the root (e.g. `args.unit`). */
export interface SchemaIssue {
  path: string;
  message: string;
  /** Set when the value could not be checked (a pattern RE2 cannot run, a match past its bound): not a violation. */
  unchecked?: true;
}

/** Each pattern of a schema compiled (RE2), or why it cannot be, by its text. */
type Patterns = Map<string, LinearRegExp | string>;

/** The compiled patterns of each schema checked, by schema object: compiled once, for its owner only. */
const compiledPatterns = new WeakMap<JsonSchema, Patterns>();

function collectPatterns(schema: JsonSchema, into: Patterns): Patterns {
  if (typeof schema.pattern === "string" && !into.has(schema.pattern)) {
    try {
      into.set(schema.pattern, linearRegExp(schema.pattern));
    } catch (error) {
      into.set(schema.pattern, (error as Error).message);
    }
  }
  for (const child of Object.values(schema.properties ?? {})) collectPatterns(child, into);
  return into;
}

/** The schema's patterns, compiled on first use (a tenant's were compiled within their bound when registered). */
function patternsOf(schema: JsonSchema): Patterns {
  let patterns = compiledPatterns.get(schema);
  if (!patterns) {
    patterns = collectPatterns(schema, new Map());
    compiledPatterns.set(schema, patterns);
  }
  return patterns;
}

/**
 * What matching a check's patterns may still cost: RE2 runs in time linear in the text, about (program size +
 * PER_CHARACTER) × text length, so the bound is on that product, the same on every machine.
 */
class MatchBudget {
  private static readonly PER_CHARACTER = 10;
  private left: number = SCHEMA_BOUNDS.maxPatternWork;

  /** Whether `pattern` matches `text`, or why it was not tried: the check's matching would pass its bound. */
  test(pattern: LinearRegExp, text: string): boolean | string {
    const cost = (pattern.programSize() + MatchBudget.PER_CHARACTER) * text.length;
    if (cost > this.left) {
      return `matching ${text.length} characters against the pattern would pass the bound on one check (${SCHEMA_BOUNDS.maxPatternWork} steps of RE2 program × text)`;
    }
    this.left -= cost;
    return pattern.test(text);
  }
}

/**
 * Checks `value` against `schema`; returns every issue found (empty when valid), violations before the parts that
 * could not be checked. Patterns run in RE2 (linear time) within SCHEMA_BOUNDS.maxPatternWork, so a tenant's schema
 * cannot hold the process.
 */
export function validateJsonSchema(value: unknown, schema: JsonSchema): SchemaIssue[] {
  const issues = issuesOf(value, schema, "", patternsOf(schema), new MatchBudget());
  return [...issues.filter((i) => !i.unchecked), ...issues.filter((i) => i.unchecked)];
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function issuesOf(
  value: unknown,
  schema: JsonSchema,
  path: string,
  patterns: Patterns,
  budget: MatchBudget,
): SchemaIssue[] {
  const at = path || "(root)";
  const issues: SchemaIssue[] = [];
  switch (schema.type) {
    case "object": {
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        return [{ path: at, message: `expected object, got ${describeType(value)}` }];
      }
      const record = value as Record<string, unknown>;
      for (const key of schema.required ?? []) {
        if (!(key in record)) issues.push({ path: join(path, key), message: "is required" });
      }
      for (const [key, child] of Object.entries(record)) {
        const childSchema = schema.properties?.[key];
        if (childSchema) issues.push(...issuesOf(child, childSchema, join(path, key), patterns, budget));
        else if (schema.additionalProperties === false) {
          issues.push({ path: join(path, key), message: "is not an allowed property" });
        }
      }
      return issues;
    }
    case "string": {
      if (typeof value !== "string")
        return [{ path: at, message: `expected string, got ${describeType(value)}` }];
      if (schema.minLength !== undefined && value.length < schema.minLength) {
        issues.push({ path: at, message: `expected at least ${schema.minLength} characters` });
      }
      if (schema.maxLength !== undefined && value.length > schema.maxLength) {
        issues.push({ path: at, message: `expected at most ${schema.maxLength} characters` });
      }
      const pattern = schema.pattern === undefined ? undefined : patterns.get(schema.pattern);
      const matched =
        pattern === undefined || typeof pattern === "string" ? pattern : budget.test(pattern, value);
      if (typeof matched === "string") {
        issues.push({ path: at, message: `could not be checked: ${matched}`, unchecked: true });
      } else if (matched === false) {
        issues.push({
          path: at,
          message: `expected to match ${schema.pattern}, got ${JSON.stringify(value)}`,
        });
      }
      break;
    }
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) {
        return [{ path: at, message: `expected ${schema.type}, got ${describeType(value)}` }];
      }
      if (schema.type === "integer" && !Number.isInteger(value)) {
        issues.push({ path: at, message: `expected integer, got ${value}` });
      }
      if (schema.minimum !== undefined && value < schema.minimum) {
        issues.push({ path: at, message: `expected >= ${schema.minimum}, got ${value}` });
      }
      if (schema.maximum !== undefined && value > schema.maximum) {
        issues.push({ path: at, message: `expected <= ${schema.maximum}, got ${value}` });
      }
      break;
    }
    case "boolean":
      if (typeof value !== "boolean")
        return [{ path: at, message: `expected boolean, got ${describeType(value)}` }];
      break;
  }
  if (schema.enum && !schema.enum.includes(value as string | number)) {
    issues.push({
      path: at,
      message: `expected one of ${schema.enum.join(", ")}, got ${JSON.stringify(value)}`,
    });
  }
  return issues;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
