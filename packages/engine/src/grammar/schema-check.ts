import type { OutputGrammar } from "@arc/core";
import { GrammarError, MAX_GRAMMAR_STATES, MAX_SCHEMA_DEPTH } from "./grammar-bounds.ts";

/** What the schemas of one request have used of MAX_GRAMMAR_STATES; one budget is shared by all of them. */
export class GrammarSizeBudget {
  used = 0;
}

const SCHEMA_TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A value as a message shows it: its JSON, cut short. */
function brief(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/**
 * Throws a TypeError naming the path of the first part of `schema` the grammar cannot follow or that is over its
 * bounds, so a bad `response_format` or tool is refused before any token is generated: an unknown type, a non-local
 * or dangling `$ref`, a `$ref` cycle that writes no output, schemas nested deeper than MAX_SCHEMA_DEPTH, or more
 * grammar states than MAX_GRAMMAR_STATES (counted in `budget`, which the request's other schemas share).
 */
export function checkGrammarSchema(
  schema: unknown,
  path = "schema",
  budget: GrammarSizeBudget = new GrammarSizeBudget(),
): void {
  new SchemaWalk(schema, path, budget).visit(schema, 0, path);
}

/** A schema being walked: the place it is used in (`context`) and the path it was reached by. */
interface Frame {
  node: object;
  context: number;
  path: string;
}

/**
 * Walks a schema once per place it is used (a new place for each property value and for array items; the same one
 * through `$ref`, `anyOf` and `oneOf`): the count bounds how many ways the grammar can be in at once. A `$ref` back
 * to a schema being walked is recursion when an object or array lies between (it unfolds as the output goes) and a
 * cycle when none does (the program would loop without reading a byte).
 */
class SchemaWalk {
  private readonly frames: Frame[] = [];
  private readonly visited = new Map<object, Set<number>>();
  private contexts = 0;

  constructor(
    private readonly root: unknown,
    private readonly rootPath: string,
    private readonly budget: GrammarSizeBudget,
  ) {}

  visit(schema: unknown, context: number, path: string, via?: { site: string; ref: string }): void {
    if (typeof schema === "boolean") {
      this.count(path, 1);
      return;
    }
    if (!isObject(schema))
      throw new TypeError(`${path}: expected a JSON Schema object, got ${brief(schema)}`);
    let open = false;
    let loop: Frame | undefined;
    for (const f of this.frames) {
      if (f.node !== schema) continue;
      open = true;
      if (f.context === context) loop ??= f;
    }
    if (loop) {
      const what = via ? `${via.site}: ${JSON.stringify(via.ref)}` : path;
      throw new TypeError(
        `${what} leads back to ${loop.path} with no output in between (a $ref cycle); a schema may refer to itself only inside an object's properties or an array's items`,
      );
    }
    if (open) return;
    const seen = this.visited.get(schema) ?? new Set<number>();
    if (seen.has(context)) return;
    seen.add(context);
    this.visited.set(schema, seen);
    this.count(path, 1);
    if (this.frames.length >= MAX_SCHEMA_DEPTH)
      throw new TypeError(
        `${path}: schemas nested more than ${MAX_SCHEMA_DEPTH} deep, $ref hops included (the bound on schema depth)`,
      );
    checkShape(schema, path);
    this.frames.push({ node: schema, context, path });
    this.children(schema, context, path);
    this.frames.pop();
  }

  /** The schemas `schema` holds, each with the place it is used in. */
  private children(schema: Record<string, unknown>, context: number, path: string): void {
    if (typeof schema.$ref === "string") {
      const target = resolveRef(this.root, schema.$ref);
      if (typeof target === "string") throw new TypeError(`${path}.$ref: ${target}`);
      const pointer = schema.$ref
        .slice(1)
        .split("/")
        .filter(Boolean)
        .map((p) => `.${p.replace(/~1/g, "/").replace(/~0/g, "~")}`)
        .join("");
      this.visit(target, context, `${this.rootPath}${pointer}`, { site: `${path}.$ref`, ref: schema.$ref });
      return;
    }
    if ("const" in schema) return;
    if (Array.isArray(schema.enum)) {
      this.count(`${path}.enum`, schema.enum.length);
      return;
    }
    for (const key of ["anyOf", "oneOf"] as const) {
      const alternatives = schema[key];
      if (!Array.isArray(alternatives)) continue;
      alternatives.forEach((sub, i) => {
        this.visit(sub, context, `${path}.${key}[${i}]`);
      });
      return;
    }
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    for (const type of types) {
      if (type === "array" && schema.items !== undefined)
        this.visit(schema.items, ++this.contexts, `${path}.items`);
      if (type !== "object") continue;
      const properties = schema.properties as Record<string, unknown> | undefined;
      if (properties && Object.keys(properties).length > 0) {
        for (const [key, sub] of Object.entries(properties))
          this.visit(sub, ++this.contexts, `${path}.properties.${key}`);
      } else if (schema.additionalProperties !== undefined) {
        this.visit(schema.additionalProperties, ++this.contexts, `${path}.additionalProperties`);
      }
    }
  }

  private count(path: string, states: number): void {
    this.budget.used += states;
    if (this.budget.used > MAX_GRAMMAR_STATES)
      throw new TypeError(
        `${path}: the request's schemas compile to more than ${MAX_GRAMMAR_STATES} grammar states (the bound on a request's grammar; a $ref counts once for each place it is used)`,
      );
  }
}

/** The fields of one schema the compiler reads, each of the shape it needs. */
function checkShape(s: Record<string, unknown>, path: string): void {
  if (s.$ref !== undefined && typeof s.$ref !== "string")
    throw new TypeError(`${path}.$ref: expected a string, got ${brief(s.$ref)}`);
  for (const t of Array.isArray(s.type) ? s.type : s.type === undefined ? [] : [s.type]) {
    if (!SCHEMA_TYPES.has(t as string))
      throw new TypeError(`${path}.type: expected one of ${[...SCHEMA_TYPES].join(", ")}, got ${brief(t)}`);
  }
  if (s.enum !== undefined && !Array.isArray(s.enum))
    throw new TypeError(`${path}.enum: expected an array, got ${brief(s.enum)}`);
  for (const key of ["anyOf", "oneOf"] as const) {
    if (s[key] !== undefined && !Array.isArray(s[key]))
      throw new TypeError(`${path}.${key}: expected an array of schemas`);
  }
  if (s.properties !== undefined && !isObject(s.properties))
    throw new TypeError(`${path}.properties: expected an object of schemas`);
  if (
    s.required !== undefined &&
    (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string"))
  )
    throw new TypeError(`${path}.required: expected an array of property names`);
}

type Schema = Record<string, unknown> | boolean;

/** The schema a local `$ref` (`#/$defs/x`) points at in `root`, or why it points at none. */
export function resolveRef(root: unknown, ref: string): Schema | string {
  if (!ref.startsWith("#")) return `$ref ${JSON.stringify(ref)}: only local references (#/...) are supported`;
  let node: unknown = root;
  for (const part of ref.slice(1).split("/").filter(Boolean)) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    node =
      typeof node === "object" && node !== null && Object.hasOwn(node, key)
        ? (node as Record<string, unknown>)[key]
        : undefined;
  }
  if (typeof node === "boolean" || (typeof node === "object" && node !== null && !Array.isArray(node)))
    return node as Schema;
  return `$ref ${JSON.stringify(ref)} points at ${node === undefined ? "nothing in the schema" : "no schema"}`;
}

/**
 * Throws a GrammarError naming the first part of `grammar` (an engine request's grammar, at `path`) that is over its
 * bounds or that the compiler cannot follow; the schemas of an `any-of` share one count of grammar states.
 */
export function checkOutputGrammar(
  grammar: OutputGrammar,
  path = "grammar",
  budget: GrammarSizeBudget = new GrammarSizeBudget(),
): void {
  if (typeof grammar !== "object" || grammar === null)
    throw new GrammarError(`${path}: expected an object, got ${brief(grammar)}`);
  if (grammar.kind === "any-of") {
    if (!Array.isArray(grammar.grammars))
      throw new GrammarError(
        `${path}.grammars: expected an array of grammars, got ${brief(grammar.grammars)}`,
      );
    grammar.grammars.forEach((g, i) => {
      checkOutputGrammar(g, `${path}.grammars[${i}]`, budget);
    });
    return;
  }
  if (grammar.kind !== "json-schema")
    throw new GrammarError(
      `${path}.kind: expected json-schema or any-of, got ${brief((grammar as { kind?: unknown }).kind)}`,
    );
  try {
    checkGrammarSchema(grammar.schema, `${path}.schema`, budget);
  } catch (error) {
    if (error instanceof TypeError) throw new GrammarError(error.message);
    throw error;
  }
}
