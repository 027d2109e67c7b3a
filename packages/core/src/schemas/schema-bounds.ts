/**
 * The bounds every JSON schema and regex a tenant hands Arc is compiled and checked within (docs/tenant-bounds.md):
 * tenant-supplied computation is bounded, so one tenant's schema cannot hold the process that serves every tenant.
 */
export const SCHEMA_BOUNDS = {
  /** Longest schema, as UTF-8 JSON text. */
  maxSchemaBytes: 65_536,
  /** Deepest nesting of objects and arrays in a schema. */
  maxSchemaDepth: 32,
  /** Longest `pattern` (or `patternProperties` key), in characters; its syntax is RE2's. */
  maxPatternLength: 1_000,
  /**
   * Most matching one check of a task family's schema may do: the sum over its pattern matches of (RE2 program size
   * + 10) × text length, about 20 ms on a laptop core; the same on every machine, so a verifier's answer is too.
   */
  maxPatternWork: 5_000_000,
  /** Longest compiling one schema may take (a tool schema in Ajv; a family's patterns, all of them, at registration). */
  compileMs: 250,
  /** Longest checking one value against a compiled tool schema may take. */
  checkMs: 50,
  /** Longest the tool-schema checks of one trace may take together. */
  traceMs: 300,
} as const;
