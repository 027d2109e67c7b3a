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
  pattern?: string;
}

/** One way a value breaks its schema; `path` is dotted from the root (e.g. `args.unit`). */
export interface SchemaIssue {
  path: string;
  message: string;
}

function describeType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** Checks `value` against `schema`; returns every issue found (empty when valid). */
export function validateJsonSchema(value: unknown, schema: JsonSchema, path = ""): SchemaIssue[] {
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
        if (childSchema) issues.push(...validateJsonSchema(child, childSchema, join(path, key)));
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
      if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
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
