import { z } from "zod";

/** What a compiled reader returns for a value its schema rejects, or that it leaves to zod (see `compileJsonReader`). */
export const notAccepted: unique symbol = Symbol("notAccepted");

/** A compiled reader: the schema's output for a value the schema accepts, else `notAccepted`. */
export type JsonReader<T> = (value: unknown) => T | typeof notAccepted;

type Read = (value: unknown) => unknown;

/**
 * Compiles a zod (v3) schema into a reader that accepts exactly the JSON values the schema accepts and returns
 * exactly what `schema.parse` would: defaults filled in, unknown keys stripped or passed through, keys in zod's
 * order (the order matters where the output is hashed). It skips zod's issue bookkeeping, which dominates zod's
 * cost on large bodies, so it cannot say what is wrong: on `notAccepted`, run `schema.safeParse` for the issues.
 *
 * The schema stays the one source of truth: the reader is derived from it, and a schema using a construct not
 * handled here (transforms, strict objects, string formats other than `datetime`...) throws when
 * compiled instead of being read differently. Values outside JSON (class instances, Maps, Dates, promises) are
 * returned as `notAccepted` even where zod might accept them, so callers that fall back to zod stay exact.
 */
export function compileJsonReader<T extends z.ZodTypeAny>(schema: T): JsonReader<z.output<T>> {
  return compile(schema) as JsonReader<z.output<T>>;
}

function unsupported(schema: z.ZodTypeAny, detail?: string): Error {
  const what = detail ? `${schema._def.typeName} with ${detail}` : schema._def.typeName;
  return new Error(
    `compileJsonReader: ${what} is not supported; extend compile-json-reader.ts or validate with zod`,
  );
}

/** A plain object as JSON.parse makes them; anything else zod may classify differently, so it is left to zod. */
function isJsonObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return (
    (prototype === Object.prototype || prototype === null) &&
    typeof (value as { then?: unknown }).then !== "function"
  );
}

function compile(schema: z.ZodTypeAny): Read {
  if (schema instanceof z.ZodString) return compileString(schema);
  if (schema instanceof z.ZodNumber) return compileNumber(schema);
  if (schema instanceof z.ZodObject) return compileObject(schema);
  if (schema instanceof z.ZodArray) return compileArray(schema);
  if (schema instanceof z.ZodRecord) return compileRecord(schema);
  if (schema instanceof z.ZodEnum) {
    const values = new Set<unknown>(schema.options);
    return (value) => (typeof value === "string" && values.has(value) ? value : notAccepted);
  }
  if (schema instanceof z.ZodUnion) {
    const options = (schema.options as z.ZodTypeAny[]).map(compile);
    // zod's union returns the first option that accepts the value.
    return (value) => {
      for (const option of options) {
        const result = option(value);
        if (result !== notAccepted) return result;
      }
      return notAccepted;
    };
  }
  if (schema instanceof z.ZodOptional) {
    const inner = compile(schema.unwrap());
    return (value) => (value === undefined ? undefined : inner(value));
  }
  if (schema instanceof z.ZodNullable) {
    const inner = compile(schema.unwrap());
    return (value) => (value === null ? null : inner(value));
  }
  if (schema instanceof z.ZodDefault) {
    const inner = compile(schema.removeDefault());
    const defaultValue: () => unknown = schema._def.defaultValue;
    return (value) => inner(value === undefined ? defaultValue() : value);
  }
  if (schema instanceof z.ZodEffects && schema._def.effect.type === "refinement")
    return compileRefinement(schema);
  if (schema instanceof z.ZodNull) return (value) => (value === null ? null : notAccepted);
  if (schema instanceof z.ZodUnknown || schema instanceof z.ZodAny) return (value) => value;
  throw unsupported(schema);
}

function compileString(schema: z.ZodString): Read {
  if (schema._def.coerce) throw unsupported(schema, "coerce");
  let minLength = 0;
  let maxLength = Number.POSITIVE_INFINITY;
  const patterns: RegExp[] = [];
  for (const check of schema._def.checks) {
    if (check.kind === "min") minLength = Math.max(minLength, check.value);
    else if (check.kind === "max") maxLength = Math.min(maxLength, check.value);
    else if (check.kind === "regex") patterns.push(check.regex);
    else if (check.kind === "datetime") patterns.push(z.datetimeRegex(check));
    else throw unsupported(schema, `the check "${check.kind}"`);
  }
  return (value) => {
    if (typeof value !== "string" || value.length < minLength || value.length > maxLength) return notAccepted;
    for (const pattern of patterns) {
      pattern.lastIndex = 0; // as zod does, for patterns with the g or y flag
      if (!pattern.test(value)) return notAccepted;
    }
    return value;
  };
}

function compileNumber(schema: z.ZodNumber): Read {
  if (schema._def.coerce) throw unsupported(schema, "coerce");
  const checks = schema._def.checks.map((check): ((n: number) => boolean) => {
    if (check.kind === "int") return Number.isInteger;
    if (check.kind === "finite") return Number.isFinite;
    if (check.kind === "min") return check.inclusive ? (n) => n >= check.value : (n) => n > check.value;
    if (check.kind === "max") return check.inclusive ? (n) => n <= check.value : (n) => n < check.value;
    throw unsupported(schema, `the check "${check.kind}"`);
  });
  return (value) => {
    if (typeof value !== "number" || Number.isNaN(value)) return notAccepted;
    for (const check of checks) if (!check(value)) return notAccepted;
    return value;
  };
}

/** A `.refine()`: the inner schema's reader, then the refinement, which fails the value by adding an issue. */
function compileRefinement(schema: z.ZodEffects<z.ZodTypeAny>): Read {
  const inner = compile(schema.innerType());
  const effect = schema._def.effect as z.RefinementEffect<unknown>;
  return (value) => {
    const read = inner(value);
    if (read === notAccepted) return notAccepted;
    let failed = false;
    const context = {
      addIssue: () => {
        failed = true;
      },
      path: [],
    } as unknown as z.RefinementCtx;
    const verdict = effect.refinement(read, context) as unknown;
    if (verdict instanceof Promise) throw unsupported(schema, "an async refinement");
    return failed ? notAccepted : read;
  };
}

function compileArray(schema: z.ZodArray<z.ZodTypeAny>): Read {
  const { exactLength, minLength, maxLength } = schema._def;
  const min = Math.max(exactLength?.value ?? 0, minLength?.value ?? 0);
  const max = Math.min(
    exactLength?.value ?? Number.POSITIVE_INFINITY,
    maxLength?.value ?? Number.POSITIVE_INFINITY,
  );
  const element = compile(schema.element);
  return (value) => {
    if (!Array.isArray(value) || value.length < min || value.length > max) return notAccepted;
    const output: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      const item = element(value[i]);
      if (item === notAccepted) return notAccepted;
      output.push(item);
    }
    return output;
  };
}

function compileObject(schema: z.AnyZodObject): Read {
  const { unknownKeys, catchall } = schema._def;
  if (!(catchall instanceof z.ZodNever)) throw unsupported(schema, "a catchall");
  if (unknownKeys !== "strip" && unknownKeys !== "passthrough")
    throw unsupported(schema, `unknownKeys "${unknownKeys}"`);
  const passthrough = unknownKeys === "passthrough";
  const shape = schema.shape as Record<string, z.ZodTypeAny>;
  const keys = Object.keys(shape);
  const shapeKeys = new Set(keys);
  const readers = keys.map((key) => compile(shape[key]));
  return (value) => {
    if (!isJsonObject(value)) return notAccepted;
    const output: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      const field = readers[i](value[key]);
      if (field === notAccepted) return notAccepted;
      // zod sets a key when its value is defined or the input has the key.
      if (field !== undefined || key in value) output[key] = field;
    }
    if (passthrough) {
      for (const key in value) {
        // zod drops `__proto__` (an own key when JSON.parse made it) and undefined values of unknown keys.
        if (shapeKeys.has(key) || key === "__proto__") continue;
        const extra = value[key];
        if (extra !== undefined) output[key] = extra;
      }
    }
    return output;
  };
}

function compileRecord(schema: z.ZodRecord): Read {
  const keyType = schema.keySchema;
  if (!(keyType instanceof z.ZodString) || keyType._def.checks.length > 0 || keyType._def.coerce)
    throw unsupported(schema, "a key type other than a plain z.string()");
  const valueReader = compile(schema.valueSchema);
  return (value) => {
    if (!isJsonObject(value)) return notAccepted;
    const output: Record<string, unknown> = {};
    for (const key in value) {
      const field = valueReader(value[key]);
      if (field === notAccepted) return notAccepted;
      if (key !== "__proto__") output[key] = field;
    }
    return output;
  };
}
