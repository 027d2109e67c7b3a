import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SCHEMA_BOUNDS } from "../schemas/index.ts";
import { type JsonSchema, validateJsonSchema } from "./json-schema.ts";

const withPattern = (pattern: string): JsonSchema => ({
  type: "object",
  properties: { code: { type: "string", pattern }, n: { type: "integer" } },
});

describe("validateJsonSchema's patterns", () => {
  it("matches ^(a+)+$ against 32 a's and ! in linear time, as RE2 does", () => {
    const started = performance.now();
    const issues = validateJsonSchema({ code: `${"a".repeat(32)}!` }, withPattern("^(a+)+$"));
    const ms = performance.now() - started;
    assert.ok(ms < 500, `took ${ms} ms`);
    assert.deepEqual(issues, [
      { path: "code", message: 'expected to match ^(a+)+$, got "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"' },
    ]);
    assert.deepEqual(validateJsonSchema({ code: "aaaa" }, withPattern("^(a+)+$")), []);
  });

  it("says a value could not be checked, rather than that it broke the schema, for a pattern RE2 cannot run", () => {
    const [issue] = validateJsonSchema({ code: "ab" }, withPattern("(?=a)b"));
    assert.equal(issue.unchecked, true);
    assert.match(issue.message, /^could not be checked: pattern "\(\?=a\)b" is not in the RE2 syntax/);
  });

  it("bounds the matching of one check by RE2 program size × text length, the same on every machine", () => {
    const long = "ab".repeat(SCHEMA_BOUNDS.maxPatternWork / 4);
    const started = performance.now();
    const issues = validateJsonSchema({ code: long, n: 1.5 }, withPattern("(?:\\p{L}|\\p{N}){100}x"));
    assert.ok(performance.now() - started < 500);
    assert.deepEqual(
      issues.map((i) => [i.path, i.unchecked ?? false]),
      [
        ["n", false],
        ["code", true],
      ],
      "violations come before what could not be checked",
    );
    assert.match(issues[1].message, /would pass the bound on one check \(5000000 steps/);
  });
});
