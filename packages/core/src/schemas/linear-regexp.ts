import type { Options } from "ajv";
import { RE2JS } from "re2js";
import { SCHEMA_BOUNDS } from "./schema-bounds.ts";

/** A compiled pattern: `test` says whether it matches anywhere in a string, as `RegExp.prototype.test` does. */
export interface LinearRegExp {
  test(text: string): boolean;
  /** Instructions in its RE2 program: matching costs about this much per character of text. */
  programSize(): number;
}

/**
 * Compiles a tenant's `pattern` with RE2 (re2js), which matches in time linear in the text: no pattern backtracks.
 * Throws an Error that says why for a pattern longer than SCHEMA_BOUNDS.maxPatternLength or outside RE2's syntax
 * (backreferences and lookaround are not in it).
 */
export function linearRegExp(pattern: string): LinearRegExp {
  if (pattern.length > SCHEMA_BOUNDS.maxPatternLength) {
    throw new Error(
      `pattern is ${pattern.length} characters; the bound is ${SCHEMA_BOUNDS.maxPatternLength}`,
    );
  }
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    throw new Error(
      `pattern ${JSON.stringify(pattern)} is not in the RE2 syntax Arc runs patterns in (no backreferences or lookaround): ${(error as Error).message}`,
    );
  }
}

type RegExpEngine = NonNullable<NonNullable<Options["code"]>["regExp"]>;

/** `linearRegExp` as Ajv's `code.regExp`, so every `pattern` and `patternProperties` of a schema runs in RE2. */
export const linearRegExpEngine: RegExpEngine = Object.assign((pattern: string) => linearRegExp(pattern), {
  code: "linearRegExp",
});
