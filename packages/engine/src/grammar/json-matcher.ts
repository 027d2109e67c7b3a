import type { OutputGrammar } from "@arc/core";
import { GrammarError, MAX_LIVE_STATES, type StepBudget } from "./grammar-bounds.ts";

/**
 * A state of an output matcher over UTF-8 bytes. States are immutable, so the engine can try every candidate token
 * from the same state; the same schema used in the same place compiles to the same state, so alternatives that lead
 * to one place merge instead of multiplying.
 */
export type Matcher = ByteMatcher | ChoiceMatcher;

/** A state that reads one byte: which bytes may come next and whether the output may end here. */
export interface ByteMatcher {
  /** The states after `byte`; empty when the byte is not allowed here. */
  next(byte: number): Matcher[];
  /** Whether the output may end here. */
  readonly accepts: boolean;
}

/** A state that stands for others (a union, a `$ref`, where an object or array goes on), listed on first use. */
export interface ChoiceMatcher {
  choices(): readonly Matcher[];
}

type Schema = Record<string, unknown> | boolean;

const END: ByteMatcher = { next: () => [], accepts: true };
const NEVER: ByteMatcher = { next: () => [], accepts: false };

const encoder = new TextEncoder();

const isChoice = (m: Matcher): m is ChoiceMatcher => "choices" in m;

/** A choice whose states are built on first use, so recursive schemas unfold only as far as the text goes. */
function lazy(build: () => readonly Matcher[]): ChoiceMatcher {
  let built: readonly Matcher[] | undefined;
  return {
    choices: () => {
      built ??= build();
      return built;
    },
  };
}

/** Any of `options`, each distinct state once. */
function union(options: Matcher[]): Matcher {
  const distinct = [...new Set(options)];
  return distinct.length === 1 ? distinct[0] : { choices: () => distinct };
}

/**
 * The byte-reading states `states` stand for, each once: choices are expanded (without recursion, so a choice that
 * leads back to itself is simply met again). Throws a GrammarError past MAX_LIVE_STATES; `budget` counts each state.
 */
export function expandStates(states: readonly Matcher[], budget?: StepBudget): ByteMatcher[] {
  if (states.length === 1 && !isChoice(states[0])) return states as ByteMatcher[];
  const seen = new Set<Matcher>();
  const out: ByteMatcher[] = [];
  const stack = [...states].reverse();
  while (stack.length > 0) {
    const m = stack.pop() as Matcher;
    if (seen.has(m)) continue;
    seen.add(m);
    if (seen.size > MAX_LIVE_STATES)
      throw new GrammarError(
        `the grammar holds more than ${MAX_LIVE_STATES} states at once (the bound on live states)`,
      );
    budget?.spend();
    if (isChoice(m)) {
      const choices = m.choices();
      for (let i = choices.length - 1; i >= 0; i--) stack.push(choices[i]);
    } else out.push(m);
  }
  return out;
}

/** The byte-reading states after `byte`, each once; empty when no state takes it. */
export function stepStates(states: readonly ByteMatcher[], byte: number, budget?: StepBudget): ByteMatcher[] {
  if (states.length === 1) {
    budget?.spend();
    return expandStates(states[0].next(byte), budget);
  }
  const next: Matcher[] = [];
  for (const s of states) {
    budget?.spend();
    for (const m of s.next(byte)) next.push(m);
  }
  return expandStates(next, budget);
}

/** Exactly the bytes of `text`, then `k`. */
function literal(text: string, k: Matcher): Matcher {
  const bytes = encoder.encode(text);
  let state = k;
  for (let i = bytes.length - 1; i >= 0; i--) {
    const after = [state];
    const byte = bytes[i];
    state = { next: (b) => (b === byte ? after : []), accepts: false };
  }
  return state;
}

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;
const isHex = (b: number) => isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const ESCAPES = new Set(encoder.encode('"\\/bfnrt'));

/** A JSON string (after its opening quote), then `k`. Raw control characters are not allowed, as in JSON. */
function stringBody(k: Matcher): Matcher {
  const end = [k];
  const body: ByteMatcher = {
    next: (byte) => {
      if (byte === 0x22) return end;
      if (byte === 0x5c) return [escaped];
      return byte < 0x20 ? [] : [body];
    },
    accepts: false,
  };
  let hex: Matcher = body;
  for (let i = 0; i < 4; i++) {
    const after: Matcher[] = [hex];
    hex = { next: (byte) => (isHex(byte) ? after : []), accepts: false };
  }
  const unicode = [hex];
  const escaped: ByteMatcher = {
    next: (byte) => (byte === 0x75 ? unicode : ESCAPES.has(byte) ? [body] : []),
    accepts: false,
  };
  return body;
}

/** A JSON number (an integer when `integer`), then `k`. */
function number(integer: boolean, k: Matcher): Matcher {
  /** A state where the number may end (then `k` goes on) or go on by `own`. */
  const complete = (own: (byte: number) => Matcher[]): Matcher => {
    const options = [pending(own), k];
    return { choices: () => options };
  };
  const pending = (own: (byte: number) => Matcher[]): ByteMatcher => ({ next: own, accepts: false });
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
  const negative = [pending(magnitude)];
  return pending((b) => (b === 0x2d ? negative : magnitude(b)));
}

/**
 * Compiles JSON Schemas (the subset OpenAI's strict structured outputs take) into matchers of compact JSON. A schema
 * compiles once per continuation (what follows it), so every use of it in the same place is the same state.
 */
class SchemaCompiler {
  private readonly compiled = new WeakMap<object, Map<Matcher, Matcher>>();
  /** Values that do not depend on their schema beyond its type (a string, a number, any value), by type, then by continuation. */
  private readonly plain = new Map<string, Map<Matcher, Matcher>>();

  constructor(private readonly root: Schema) {}

  value(schema: Schema, k: Matcher): Matcher {
    if (schema === true) return this.any(k);
    if (schema === false) return NEVER;
    let byContinuation = this.compiled.get(schema);
    if (!byContinuation) {
      byContinuation = new Map();
      this.compiled.set(schema, byContinuation);
    }
    let m = byContinuation.get(k);
    if (!m) {
      m = this.compile(schema, k);
      byContinuation.set(k, m);
    }
    return m;
  }

  private compile(schema: Record<string, unknown>, k: Matcher): Matcher {
    if (typeof schema.$ref === "string") {
      const target = this.resolve(schema.$ref);
      return lazy(() => [this.value(target, k)]);
    }
    if ("const" in schema) return literal(JSON.stringify(schema.const), k);
    if (Array.isArray(schema.enum)) return union(schema.enum.map((v) => literal(JSON.stringify(v), k)));
    const alternatives = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
    if (Array.isArray(alternatives)) return union(alternatives.map((s) => this.value(s, k)));
    const type = schema.type;
    if (Array.isArray(type)) return union(type.map((t) => this.compile({ ...schema, type: t }, k)));
    switch (type) {
      case "object":
        return this.object(schema, k);
      case "array":
        return this.array((schema.items as Schema | undefined) ?? true, k);
      case "string":
        return this.plainValue("string", k, () => literal('"', stringBody(k)));
      case "number":
        return this.plainValue("number", k, () => number(false, k));
      case "integer":
        return this.plainValue("integer", k, () => number(true, k));
      case "boolean":
        return this.plainValue("boolean", k, () => union([literal("true", k), literal("false", k)]));
      case "null":
        return this.plainValue("null", k, () => literal("null", k));
      case undefined:
        return this.any(k);
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

  /** The value of `type` then `k`, built once for each continuation, so equal alternatives are one state. */
  private plainValue(type: string, k: Matcher, build: () => Matcher): Matcher {
    let byContinuation = this.plain.get(type);
    if (!byContinuation) {
      byContinuation = new Map();
      this.plain.set(type, byContinuation);
    }
    let m = byContinuation.get(k);
    if (!m) {
      m = build();
      byContinuation.set(k, m);
    }
    return m;
  }

  /** Any JSON value. */
  private any(k: Matcher): Matcher {
    return this.plainValue("any", k, () =>
      lazy(() =>
        ["object", "array", "string", "number", "boolean", "null"].map((type) => this.compile({ type }, k)),
      ),
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
      const rest = new Map<number, Matcher>();
      /** The members from key `i` on (`first`: none written yet), each position built once. */
      const from = (i: number, first: boolean): Matcher => {
        const at = 2 * i + (first ? 1 : 0);
        let m = rest.get(at);
        if (!m) {
          m = lazy(() => {
            if (i === keys.length) return [literal("}", k)];
            const key = keys[i];
            const member = literal(
              `${first ? "" : ","}${JSON.stringify(key)}:`,
              this.value(properties[key], from(i + 1, false)),
            );
            return required.has(key) ? [member] : [member, from(i + 1, first)];
          });
          rest.set(at, m);
        }
        return m;
      };
      return literal("{", from(0, true));
    }
    const values = (schema.additionalProperties as Schema | undefined) ?? true;
    const member: Matcher = lazy(() => [
      literal(
        '"',
        stringBody(literal(":", this.value(values, union([literal(",", member), literal("}", k)])))),
      ),
    ]);
    return literal("{", union([literal("}", k), member]));
  }

  /** An array whose items all match `items`. */
  private array(items: Schema, k: Matcher): Matcher {
    const item: Matcher = lazy(() => [this.value(items, union([literal(",", item), literal("]", k)]))]);
    return literal("[", union([literal("]", k), item]));
  }
}

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

/** The matcher of everything `grammar` allows, from the first byte of the output. */
export function grammarMatcher(grammar: OutputGrammar): Matcher {
  if (grammar.kind === "any-of") return union(grammar.grammars.map(grammarMatcher));
  const compiler = new SchemaCompiler(grammar.schema);
  return literal(grammar.before ?? "", compiler.value(grammar.schema, literal(grammar.after ?? "", END)));
}
