import type { OutputGrammar } from "@arc/core";

/**
 * A state of an output matcher over UTF-8 bytes: which bytes may come next and whether the output may end here.
 * States are immutable, so the engine can try every candidate token from the same state.
 */
export interface Matcher {
  /** The states after `byte`; empty when the byte is not allowed here. */
  next(byte: number): Matcher[];
  /** Whether the output may end here. */
  readonly accepts: boolean;
}

type Schema = Record<string, unknown> | boolean;

const END: Matcher = { next: () => [], accepts: true };

const encoder = new TextEncoder();

/** Builds the matcher on first use, so recursive schemas and repeated items unfold only as far as the text goes. */
function lazy(build: () => Matcher): Matcher {
  let built: Matcher | undefined;
  const get = () => {
    built ??= build();
    return built;
  };
  return {
    next: (byte) => get().next(byte),
    get accepts() {
      return get().accepts;
    },
  };
}

function union(options: Matcher[]): Matcher {
  if (options.length === 1) return options[0];
  return {
    next: (byte) => options.flatMap((m) => m.next(byte)),
    get accepts() {
      return options.some((m) => m.accepts);
    },
  };
}

/** Exactly the bytes of `text`, then `k`. */
function literal(text: string, k: Matcher): Matcher {
  const bytes = encoder.encode(text);
  const at = (i: number): Matcher =>
    i === bytes.length ? k : { next: (byte) => (byte === bytes[i] ? [at(i + 1)] : []), accepts: false };
  return at(0);
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);

/** A JSON string (after its opening quote), then `k`. Raw control characters are not allowed, as in JSON. */
function stringBody(k: Matcher): Matcher {
  const body: Matcher = {
    next: (byte) => {
      if (byte === 0x22) return [k];
      if (byte === 0x5c) return [escaped];
      return byte < 0x20 ? [] : [body];
    },
    accepts: false,
  };
  const hex = (left: number): Matcher =>
    left === 0 ? body : { next: (byte) => (isHex(byte) ? [hex(left - 1)] : []), accepts: false };
  const escaped: Matcher = {
    next: (byte) => {
      if (byte === 0x75) return [hex(4)];
      return '"\\/bfnrt'.includes(String.fromCharCode(byte)) ? [body] : [];
    },
    accepts: false,
  };
  return body;
}

/** A JSON number (an integer when `integer`), then `k`. */
function number(integer: boolean, k: Matcher): Matcher {
  const complete = (own: (byte: number) => Matcher[]): Matcher => ({
    next: (byte) => [...own(byte), ...k.next(byte)],
    get accepts() {
      return k.accepts;
    },
  });
  const pending = (own: (byte: number) => Matcher[]): Matcher => ({ next: own, accepts: false });
  const expDigits: Matcher = complete((b) => (isDigit(b) ? [expDigits] : []));
  const expSign = pending((b) => (isDigit(b) ? [expDigits] : []));
  const expStart = pending((b) => (b === 0x2b || b === 0x2d ? [expSign] : isDigit(b) ? [expDigits] : []));
  const fraction = (b: number) =>
    integer ? [] : b === 0x2e ? [fracStart] : b === 0x65 || b === 0x45 ? [expStart] : [];
  const fracDigits: Matcher = complete((b) =>
    isDigit(b) ? [fracDigits] : b === 0x65 || b === 0x45 ? [expStart] : [],
  );
  const fracStart = pending((b) => (isDigit(b) ? [fracDigits] : []));
  const zero = complete(fraction);
  const digits: Matcher = complete((b) => (isDigit(b) ? [digits] : fraction(b)));
  const magnitude = (b: number) => (b === 0x30 ? [zero] : isDigit(b) ? [digits] : []);
  return pending((b) => (b === 0x2d ? [pending(magnitude)] : magnitude(b)));
}

/** Compiles JSON Schemas (the subset OpenAI's strict structured outputs take) into matchers of compact JSON. */
class SchemaCompiler {
  constructor(private readonly root: Schema) {}

  value(schema: Schema, k: Matcher): Matcher {
    if (schema === true) return this.any(k);
    if (schema === false) return { next: () => [], accepts: false };
    if (typeof schema.$ref === "string")
      return lazy(() => this.value(this.resolve(schema.$ref as string), k));
    if ("const" in schema) return literal(JSON.stringify(schema.const), k);
    if (Array.isArray(schema.enum)) return union(schema.enum.map((v) => literal(JSON.stringify(v), k)));
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(alternatives)) return union(alternatives.map((s) => this.value(s, k)));
    const type = schema.type;
    if (Array.isArray(type)) return union(type.map((t) => this.value({ ...schema, type: t }, k)));
    switch (type) {
      case "object":
        return this.object(schema, k);
      case "array":
        return this.array((schema.items as Schema | undefined) ?? true, k);
      case "string":
        return literal('"', stringBody(k));
      case "number":
        return number(false, k);
      case "integer":
        return number(true, k);
      case "boolean":
        return union([literal("true", k), literal("false", k)]);
      case "null":
        return literal("null", k);
      case undefined:
        return this.any(k);
      default:
        throw new TypeError(`schema type ${JSON.stringify(type)} is not one JSON Schema defines`);
    }
  }

  /** The schema a local `$ref` (`#/$defs/x`) points at. */
  resolve(ref: string): Schema {
    if (!ref.startsWith("#"))
      throw new TypeError(`$ref ${JSON.stringify(ref)}: only local references (#/...) are supported`);
    let node: unknown = this.root;
    for (const part of ref.slice(1).split("/").filter(Boolean)) {
      node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    if (node === undefined)
      throw new TypeError(`$ref ${JSON.stringify(ref)} points at nothing in the schema`);
    return node as Schema;
  }

  /** Any JSON value. */
  private any(k: Matcher): Matcher {
    return lazy(() =>
      union([
        this.object({ type: "object" }, k),
        this.array(true, k),
        literal('"', stringBody(k)),
        number(false, k),
        literal("true", k),
        literal("false", k),
        literal("null", k),
      ]),
    );
  }

  /**
   * An object. With `properties`, the keys come in the schema's order, each `required` one present and no others
   * (strict mode). Without, any keys, each value matching `additionalProperties` (any value when absent or true).
   */
  private object(schema: Record<string, unknown>, k: Matcher): Matcher {
    const properties = schema.properties as Record<string, Schema> | undefined;
    if (properties && Object.keys(properties).length > 0) {
      const keys = Object.keys(properties);
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const from = (i: number, first: boolean): Matcher =>
        lazy(() => {
          if (i === keys.length) return literal("}", k);
          const key = keys[i];
          const member = literal(
            `${first ? "" : ","}${JSON.stringify(key)}:`,
            this.value(properties[key], from(i + 1, false)),
          );
          return required.has(key) ? member : union([member, from(i + 1, first)]);
        });
      return literal("{", from(0, true));
    }
    const values = (schema.additionalProperties as Schema | undefined) ?? true;
    const member: Matcher = lazy(() =>
      literal(
        '"',
        stringBody(literal(":", this.value(values, union([literal(",", member), literal("}", k)])))),
      ),
    );
    return literal("{", union([literal("}", k), member]));
  }

  /** An array whose items all match `items`. */
  private array(items: Schema, k: Matcher): Matcher {
    const item: Matcher = lazy(() => this.value(items, union([literal(",", item), literal("]", k)])));
    return literal("[", union([literal("]", k), item]));
  }
}

/** The matcher of everything `grammar` allows, from the first byte of the output. */
export function grammarMatcher(grammar: OutputGrammar): Matcher {
  if (grammar.kind === "any-of") return union(grammar.grammars.map(grammarMatcher));
  const compiler = new SchemaCompiler(grammar.schema);
  return literal(grammar.before ?? "", compiler.value(grammar.schema, literal(grammar.after ?? "", END)));
}

const SCHEMA_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

/**
 * Throws a TypeError naming the path of the first part of `schema` the matcher cannot follow (an unknown type,
 * a non-local or dangling `$ref`), so a bad `response_format` is refused before any token is generated.
 */
export function checkGrammarSchema(schema: unknown, path = "schema", root: unknown = schema): void {
  if (typeof schema === "boolean") return;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema))
    throw new TypeError(`${path}: expected a JSON Schema object, got ${JSON.stringify(schema)}`);
  const s = schema as Record<string, unknown>;
  if (typeof s.$ref === "string") {
    new SchemaCompiler(root as Schema).resolve(s.$ref);
    return;
  }
  for (const t of Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]) {
    if (!SCHEMA_TYPES.has(t as string))
      throw new TypeError(
        `${path}.type: expected one of ${[...SCHEMA_TYPES].join(", ")}, got ${JSON.stringify(t)}`,
      );
  }
  if (s.enum !== undefined && !Array.isArray(s.enum))
    throw new TypeError(`${path}.enum: expected an array, got ${JSON.stringify(s.enum)}`);
  for (const key of ["anyOf", "oneOf"] as const) {
    if (s[key] === undefined) continue;
    if (!Array.isArray(s[key])) throw new TypeError(`${path}.${key}: expected an array of schemas`);
    (s[key] as unknown[]).forEach((sub, i) => {
      checkGrammarSchema(sub, `${path}.${key}[${i}]`, root);
    });
  }
  const properties = s.properties;
  if (properties !== undefined) {
    if (typeof properties !== "object" || properties === null || Array.isArray(properties))
      throw new TypeError(`${path}.properties: expected an object of schemas`);
    for (const [key, sub] of Object.entries(properties))
      checkGrammarSchema(sub, `${path}.properties.${key}`, root);
  }
  if (s.items !== undefined) checkGrammarSchema(s.items, `${path}.items`, root);
  if (typeof s.additionalProperties === "object")
    checkGrammarSchema(s.additionalProperties, `${path}.additionalProperties`, root);
}
