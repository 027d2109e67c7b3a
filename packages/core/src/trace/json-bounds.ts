import { InvalidInputError } from "../errors/index.ts";

/** The bounds every JSON request body is held to before a route reads it. */
export interface JsonLimits {
  /** Deepest nesting of arrays and objects. */
  maxDepth: number;
  /** Longest string value or key, in UTF-16 code units. */
  maxStringLength: number;
  /** Most elements of one array. */
  maxArrayLength: number;
  /** Most keys of one object. */
  maxObjectKeys: number;
}

/** Generous for any agent's traces and chats, far below what would strain the stores or the PGlite worker. */
export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 64,
  maxStringLength: 2_000_000,
  maxArrayLength: 100_000,
  maxObjectKeys: 10_000,
};

/** What the reader does with a lone UTF-16 surrogate (an unpaired `\ud800`), which PostgreSQL cannot store. */
export type LoneSurrogatePolicy = "refuse" | "replace";

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

/** One open container while scanning: an array counts its elements, an object remembers its current key. */
type Frame = { array: true; index: number } | { array: false; keyStart: number; keyEnd: number };

function invalid(path: string, problem: string): InvalidInputError {
  return new InvalidInputError(`${path || "(body)"}: ${problem}`, { field: path || undefined });
}

/** The dotted path (`traces.0.steps`) of the open containers, keys decoded from the text, under `root`. */
function pathOf(text: string, frames: Frame[], root: string): string {
  const parts: string[] = root ? [root] : [];
  for (const frame of frames) {
    if (frame.array) parts.push(String(frame.index));
    else if (frame.keyStart >= 0)
      parts.push(JSON.parse(text.slice(frame.keyStart, frame.keyEnd + 1)) as string);
  }
  return parts.join(".");
}

/**
 * Checks the nesting depth of a JSON text before it is parsed, so that a body nested a million levels deep costs a
 * scan up to the limit rather than a parse of all of it. Throws an InvalidInputError naming the deepest field.
 */
export function checkJsonDepth(text: string, maxDepth: number, rootPath = ""): void {
  const frames: Frame[] = [];
  let lastStringStart = -1;
  let lastStringEnd = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === QUOTE) {
      lastStringStart = i;
      i++;
      while (i < text.length) {
        const c = text.charCodeAt(i);
        if (c === BACKSLASH) i += 2;
        else if (c === QUOTE) break;
        else i++;
      }
      lastStringEnd = i;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (frames.length >= maxDepth) {
        throw invalid(
          pathOf(text, frames, rootPath),
          `nested deeper than ${maxDepth} levels of arrays and objects`,
        );
      }
      frames.push(
        code === OPEN_BRACKET ? { array: true, index: 0 } : { array: false, keyStart: -1, keyEnd: -1 },
      );
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      frames.pop();
    } else if (code === COMMA) {
      const top = frames.at(-1);
      if (top?.array) top.index++;
    } else if (code === COLON) {
      const top = frames.at(-1);
      if (top && !top.array) {
        top.keyStart = lastStringStart;
        top.keyEnd = lastStringEnd;
      }
    }
  }
}

/** True when a string holds a UTF-16 surrogate without its pair. */
function hasLoneSurrogate(value: string): boolean {
  return !value.isWellFormed();
}

/** How `checkJsonValue` treats the characters PostgreSQL cannot store, and where the value sits in its body. */
export interface JsonValueChecks {
  /** Lone surrogates are refused or replaced with U+FFFD. */
  surrogates: LoneSurrogatePolicy;
  /** The text may hold a lone surrogate (see `mayHoldLoneSurrogates`); false skips the per-string check. */
  mayHoldLoneSurrogates: boolean;
  /** The text may hold the NUL character (an `\u0000` escape): it is then refused wherever it is. */
  mayHoldNul?: boolean;
  /** The field the value is, prefixed to every path an error names. */
  rootPath?: string;
  /**
   * Numbers that are not finite (a JSON literal past a double's range, such as 1e400, parses as Infinity) are
   * refused, naming the field, unless `keep` (a protobuf double may be NaN or ±Infinity).
   */
  nonFiniteNumbers?: "refuse" | "keep";
}

/**
 * Holds a parsed JSON body to `limits`: depth, string, key and array sizes, object widths, lone surrogates (refused or
 * replaced with U+FFFD), the NUL character when asked, numbers that are not finite (which JSON cannot carry back:
 * they would be stored as null), and `__proto__` keys, which no Arc record has and which would change an object's
 * prototype when copied. Throws an InvalidInputError naming the field; returns the value, repaired when surrogates
 * are replaced. Iterative, so no body can exhaust the stack.
 */
export function checkJsonValue(root: unknown, limits: JsonLimits, checks: JsonValueChecks): unknown {
  const { surrogates, mayHoldLoneSurrogates, mayHoldNul = false, rootPath = "" } = checks;
  const refuseNonFinite = checks.nonFiniteNumbers !== "keep";
  /** An open container: its parent and key make its path, built only when an error needs it. */
  type Container = { value: object; parent: Container | null; key: string; depth: number };
  const pathOf = (container: Container | null, key?: string): string => {
    const parts: string[] = key === undefined ? [] : [key];
    for (let c = container; c !== null; c = c.parent) if (c.parent !== null || c.key) parts.push(c.key);
    return parts.reverse().join(".");
  };
  const checkString = (value: string, container: Container | null, key: string | undefined, what: string) => {
    if (value.length > limits.maxStringLength) {
      const problem = `${what} of ${value.length} characters exceeds the limit of ${limits.maxStringLength}`;
      throw invalid(pathOf(container, key), problem);
    }
    if (mayHoldNul && value.includes("\0")) {
      throw invalid(
        pathOf(container, key),
        "contains the NUL character (\\u0000), which Arc cannot store; remove or escape it",
      );
    }
    if (mayHoldLoneSurrogates && hasLoneSurrogate(value)) {
      if (surrogates === "replace") return value.toWellFormed();
      throw invalid(
        pathOf(container, key),
        `${what} contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape), which is not valid Unicode`,
      );
    }
    return value;
  };
  const checkNumber = (value: number, container: Container | null, key: string | undefined) => {
    if (refuseNonFinite && !Number.isFinite(value)) {
      throw invalid(
        pathOf(container, key),
        `the number is out of range: a JSON number must be finite and within ±${Number.MAX_VALUE}`,
      );
    }
  };
  const top: Container = { value: {}, parent: null, key: rootPath, depth: 0 };
  if (typeof root === "string") return checkString(root, top, undefined, "string");
  if (typeof root === "number") checkNumber(root, top, undefined);
  const stack: Container[] = [];
  if (typeof root === "object" && root !== null)
    stack.push({ value: root, parent: null, key: rootPath, depth: 1 });
  while (stack.length > 0) {
    const container = stack.pop() as Container;
    const value = container.value;
    if (container.depth > limits.maxDepth) {
      throw invalid(pathOf(container), `nested deeper than ${limits.maxDepth} levels of arrays and objects`);
    }
    if (Array.isArray(value)) {
      if (value.length > limits.maxArrayLength) {
        throw invalid(
          pathOf(container),
          `array of ${value.length} elements exceeds the limit of ${limits.maxArrayLength}`,
        );
      }
      for (let i = 0; i < value.length; i++) {
        const child = value[i];
        if (typeof child === "string") value[i] = checkString(child, container, String(i), "string");
        else if (typeof child === "number") checkNumber(child, container, String(i));
        else if (typeof child === "object" && child !== null)
          stack.push({ value: child, parent: container, key: String(i), depth: container.depth + 1 });
      }
      continue;
    }
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length > limits.maxObjectKeys) {
      throw invalid(
        pathOf(container),
        `object with ${keys.length} keys exceeds the limit of ${limits.maxObjectKeys}`,
      );
    }
    for (const key of keys) {
      if (key === "__proto__") throw invalid(pathOf(container, key), "the key __proto__ is not accepted");
      const safeKey = checkString(key, container, key, "key");
      const child = record[key];
      if (safeKey !== key) {
        delete record[key];
        record[safeKey] = child;
      }
      if (typeof child === "string") record[safeKey] = checkString(child, container, safeKey, "string");
      else if (typeof child === "number") checkNumber(child, container, safeKey);
      else if (typeof child === "object" && child !== null)
        stack.push({ value: child, parent: container, key: safeKey, depth: container.depth + 1 });
    }
  }
  return root;
}

/** True when a JSON text may decode to a lone surrogate: it has a `\ud800`-`\udfff` escape (raw ones are invalid UTF-8). */
export function mayHoldLoneSurrogates(text: string): boolean {
  return /\\u[dD][89a-fA-F]/.test(text);
}

/**
 * Parses JSON text held in a field of a body (an OTLP attribute carrying messages as a JSON string) under the same
 * bounds as a body, so that no path stores JSON the body reader would refuse. Throws an InvalidInputError naming
 * the field under `field`; returns undefined for text that is not JSON.
 */
export function parseBoundedJson(
  text: string,
  field: string,
  limits: JsonLimits = DEFAULT_JSON_LIMITS,
  surrogates: LoneSurrogatePolicy = "replace",
): unknown {
  checkJsonDepth(text, limits.maxDepth, field);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return checkJsonValue(value, limits, {
    surrogates,
    mayHoldLoneSurrogates: mayHoldLoneSurrogates(text),
    rootPath: field,
  });
}
