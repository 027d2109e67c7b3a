import type { OutputGrammar } from "@arc/core";
import { GrammarError, MAX_PROGRAM_NODES } from "./grammar-bounds.ts";
import { checkOutputGrammar, resolveRef } from "./schema-check.ts";

/**
 * One node of a grammar program, a recursive transition network over UTF-8 bytes:
 * - `[0, lo, hi, to, ...]` reads one byte: a byte in [lo, hi] goes to node `to` (the ranges do not overlap);
 * - `[1, ...to]` goes on at any of the nodes `to` without reading (none: the output cannot go on here);
 * - `[2, entry, ret]` goes on at `entry` and, when that value's RETURN is reached, at `ret`;
 * - `[3]` RETURN: back to where the last call said, or, with no call open, the end of the output.
 */
export type ProgramNode = number[];

/**
 * A grammar compiled once, in TypeScript, for both engines: the embedded engine and the PyTorch worker
 * (`python/arc_torch/grammar.py`) follow the same program with the same small interpreter, so there is one grammar.
 * Plain JSON, so it crosses to the worker as it is.
 */
export interface GrammarProgram {
  /** Where the output begins. */
  start: number;
  nodes: ProgramNode[];
}

/** Node kinds (a node's first number). */
export const BYTES = 0;
export const SPLIT = 1;
export const CALL = 2;
export const RETURN = 3;

type Schema = Record<string, unknown> | boolean;

const encoder = new TextEncoder();
const ESCAPES = [...encoder.encode('"/\\bfnrt')].sort((a, b) => a - b);

/** A program's nodes as they are built: each new node bounded by MAX_PROGRAM_NODES. */
class ProgramBuilder {
  readonly nodes: ProgramNode[] = [[RETURN], [SPLIT]];
  /** The shared RETURN node, and the node no output goes through. */
  readonly ret = 0;
  readonly never = 1;
  /** Values that do not depend on their schema beyond its type (a string, a number, any value): one rule each. */
  readonly plain = new Map<string, number>();

  add(node: ProgramNode): number {
    if (this.nodes.length >= MAX_PROGRAM_NODES)
      throw new GrammarError(
        `the grammar compiles to more than ${MAX_PROGRAM_NODES} nodes (the bound on a request's grammar program)`,
      );
    this.nodes.push(node);
    return this.nodes.length - 1;
  }

  /** A node to fill in later (a rule that may be reached before it is built, through recursion). */
  reserve(): number {
    return this.add([SPLIT]);
  }

  /** Any of `targets`, each once. */
  split(targets: number[]): number {
    const distinct = [...new Set(targets)];
    return distinct.length === 1 ? distinct[0] : this.add([SPLIT, ...distinct]);
  }

  /** Exactly the bytes of `text`, then `to`. */
  literal(text: string, to: number): number {
    const bytes = encoder.encode(text);
    let at = to;
    for (let i = bytes.length - 1; i >= 0; i--) at = this.add([BYTES, bytes[i], bytes[i], at]);
    return at;
  }

  /** A value beginning at `entry`, then `to`. */
  call(entry: number, to: number): number {
    return this.add([CALL, entry, to]);
  }

  /** The rule of a plain value `type`, built once by `build` (which may reach the rule again). */
  plainRule(type: string, build: () => number): number {
    let at = this.plain.get(type);
    if (at === undefined) {
      at = this.reserve();
      this.plain.set(type, at);
      this.nodes[at] = [SPLIT, build()];
    }
    return at;
  }

  /** A JSON string's body (after its opening quote) up to and with its closing quote, then `to`. */
  stringBody(to: number): number {
    const body = this.reserve();
    let hex = body;
    for (let i = 0; i < 4; i++) hex = this.add([BYTES, 0x30, 0x39, hex, 0x41, 0x46, hex, 0x61, 0x66, hex]);
    const escaped = this.add([BYTES, ...ESCAPES.flatMap((b) => [b, b, body]), 0x75, 0x75, hex]);
    this.nodes[body] = [
      BYTES,
      0x20,
      0x21,
      body,
      0x22,
      0x22,
      to,
      0x23,
      0x5b,
      body,
      0x5c,
      0x5c,
      escaped,
      0x5d,
      0xff,
      body,
    ];
    return body;
  }

  /** A JSON number (an integer when `integer`), then `to`. */
  number(integer: boolean, to: number): number {
    const digits = (next: number) => [0x30, 0x39, next];
    const exponentMark = (next: number) => [0x45, 0x45, next, 0x65, 0x65, next];
    /** A place where the number may end (going on at `to`) or go on by `edges`. */
    const complete = (at: number, edges: number[]) => {
      this.nodes[at] = edges.length > 0 ? [SPLIT, this.add([BYTES, ...edges]), to] : [SPLIT, to];
    };
    const expDigits = this.reserve();
    complete(expDigits, digits(expDigits));
    const expSign = this.add([BYTES, ...digits(expDigits)]);
    const expStart = this.add([BYTES, 0x2b, 0x2b, expSign, 0x2d, 0x2d, expSign, ...digits(expDigits)]);
    const fracDigits = this.reserve();
    complete(fracDigits, [...digits(fracDigits), ...exponentMark(expStart)]);
    const fracStart = this.add([BYTES, ...digits(fracDigits)]);
    const fraction = integer ? [] : [0x2e, 0x2e, fracStart, ...exponentMark(expStart)];
    const zero = this.reserve();
    complete(zero, fraction);
    const moreDigits = this.reserve();
    complete(moreDigits, [...digits(moreDigits), ...fraction]);
    const magnitude = [0x30, 0x30, zero, 0x31, 0x39, moreDigits];
    return this.add([BYTES, 0x2d, 0x2d, this.add([BYTES, ...magnitude]), ...magnitude]);
  }
}

/**
 * Compiles the JSON Schemas of one grammar (the subset OpenAI's strict structured outputs take) into rules of compact
 * JSON: each schema one rule, entered by a CALL and left by RETURN, so a schema used in many places is built once and
 * a recursive `$ref` is a call back into its own rule.
 */
class SchemaCompiler {
  private readonly entries = new Map<object, number>();

  constructor(
    private readonly b: ProgramBuilder,
    private readonly root: Schema,
  ) {}

  /** Where a value of `schema` begins; it ends at RETURN. */
  entry(schema: Schema): number {
    if (schema === true) return this.any();
    if (schema === false) return this.b.never;
    let at = this.entries.get(schema);
    if (at === undefined) {
      at = this.b.reserve();
      this.entries.set(schema, at);
      this.b.nodes[at] = [SPLIT, this.compile(schema)];
    }
    return at;
  }

  private compile(schema: Record<string, unknown>): number {
    const b = this.b;
    if (typeof schema.$ref === "string") return this.entry(this.resolve(schema.$ref));
    if ("const" in schema) return b.literal(JSON.stringify(schema.const), b.ret);
    if (Array.isArray(schema.enum))
      return b.split(schema.enum.map((v) => b.literal(JSON.stringify(v), b.ret)));
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(alternatives)) return b.split(alternatives.map((s) => this.entry(s)));
    const type = schema.type;
    if (Array.isArray(type)) return b.split(type.map((t) => this.compile({ ...schema, type: t })));
    switch (type) {
      case "object":
        return this.object(schema);
      case "array":
        return this.array((schema.items as Schema | undefined) ?? true);
      case "string":
        return b.plainRule("string", () => b.literal('"', b.stringBody(b.ret)));
      case "number":
        return b.plainRule("number", () => b.number(false, b.ret));
      case "integer":
        return b.plainRule("integer", () => b.number(true, b.ret));
      case "boolean":
        return b.plainRule("boolean", () => b.split([b.literal("true", b.ret), b.literal("false", b.ret)]));
      case "null":
        return b.plainRule("null", () => b.literal("null", b.ret));
      case undefined:
        return this.any();
      default:
        throw new GrammarError(`schema type ${JSON.stringify(type)} is not one JSON Schema defines`);
    }
  }

  /** The schema a local `$ref` (`#/$defs/x`) points at. */
  private resolve(ref: string): Schema {
    const node = resolveRef(this.root, ref);
    if (typeof node === "string") throw new GrammarError(node);
    return node;
  }

  /** Any JSON value. */
  private any(): number {
    return this.b.plainRule("any", () =>
      this.b.split(
        ["object", "array", "string", "number", "boolean", "null"].map((type) => this.compile({ type })),
      ),
    );
  }

  /**
   * An object. With `properties`, the keys come in the schema's order, each `required` one present and no others
   * (strict mode). Without, any keys, each value matching `additionalProperties` (any value when absent or true).
   */
  private object(schema: Record<string, unknown>): number {
    const b = this.b;
    const properties = schema.properties as Record<string, Schema> | undefined;
    if (properties && Object.keys(properties).length > 0) {
      const keys = Object.keys(properties);
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const built = new Map<number, number>();
      /** The members from key `i` on (`first`: none written yet), each position built once. */
      const from = (i: number, first: boolean): number => {
        const at = 2 * i + (first ? 1 : 0);
        let node = built.get(at);
        if (node === undefined) {
          if (i === keys.length) node = b.literal("}", b.ret);
          else {
            const key = keys[i];
            const value = b.call(this.entry(properties[key]), from(i + 1, false));
            const member = b.literal(`${first ? "" : ","}${JSON.stringify(key)}:`, value);
            node = required.has(key) ? member : b.split([member, from(i + 1, first)]);
          }
          built.set(at, node);
        }
        return node;
      };
      return b.literal("{", from(0, true));
    }
    const values = this.entry((schema.additionalProperties as Schema | undefined) ?? true);
    const member = b.reserve();
    const next = b.split([b.literal(",", member), b.literal("}", b.ret)]);
    b.nodes[member] = [SPLIT, b.literal('"', b.stringBody(b.literal(":", b.call(values, next))))];
    return b.literal("{", b.split([b.literal("}", b.ret), member]));
  }

  /** An array whose items all match `items`. */
  private array(items: Schema): number {
    const b = this.b;
    const item = b.reserve();
    const next = b.split([b.literal(",", item), b.literal("]", b.ret)]);
    b.nodes[item] = [SPLIT, b.call(this.entry(items), next)];
    return b.literal("[", b.split([b.literal("]", b.ret), item]));
  }
}

/**
 * The program of everything `grammar` allows, from the first byte of the output. Its schemas are checked first
 * (`checkOutputGrammar`): a grammar over its bounds or one the compiler cannot follow throws a GrammarError naming
 * the part, before any token.
 */
export function compileGrammar(grammar: OutputGrammar): GrammarProgram {
  checkOutputGrammar(grammar);
  const b = new ProgramBuilder();
  const top = (g: OutputGrammar): number => {
    if (g.kind === "any-of") return b.split(g.grammars.map(top));
    const value = new SchemaCompiler(b, g.schema).entry(g.schema);
    return b.literal(g.before ?? "", b.call(value, b.literal(g.after ?? "", b.ret)));
  };
  return { start: top(grammar), nodes: b.nodes };
}
