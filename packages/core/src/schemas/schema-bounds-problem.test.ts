import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { patternsProblem, schemaBoundsProblem } from "./schema-bounds-problem.ts";

describe("the bounds on a schema, before anything compiles it", () => {
  it("reads patterns where they are keywords, not in data or as property names", () => {
    const schema = {
      type: "object",
      properties: { pattern: { type: "string" }, enum: { type: "string", pattern: "^[a-z]+$" } },
      patternProperties: { "^x-(?:[a-z]+)$": { type: "string" } },
      default: { pattern: "(?=not a schema)" },
      examples: [{ pattern: "x".repeat(5_000) }],
    };
    assert.equal(schemaBoundsProblem(schema), null);
    assert.equal(patternsProblem([schema]), null);
  });

  it("names the schema and the pattern RE2 cannot run, whether a pattern or a patternProperties key", () => {
    const ok = { type: "string", pattern: "^ok$" };
    const lookahead = { type: "object", properties: { a: { type: "string", pattern: "^(?!x)" } } };
    assert.deepEqual(patternsProblem([ok, lookahead])?.path, ["properties", "a", "pattern"]);
    assert.equal(patternsProblem([ok, lookahead])?.schema, 1);
    const key = patternsProblem([{ type: "object", patternProperties: { "(a)\\1": {} } }]);
    assert.deepEqual(key?.path, ["patternProperties", "(a)\\1"]);
    assert.match(
      key?.message ?? "",
      /not in the RE2 syntax Arc runs patterns in \(no backreferences or lookaround\)/,
    );
  });
});
