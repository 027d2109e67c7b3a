import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { chainOfChoices, chainOfPairs } from "./__fixtures__/hostile-schemas.ts";
import { MAX_GRAMMAR_STATES, MAX_SCHEMA_DEPTH } from "./grammar-bounds.ts";
import { checkGrammarSchema, GrammarSizeBudget } from "./schema-check.ts";

describe("a grammar's schema is checked before any token is generated", () => {
  it("names the part of a schema it cannot follow", () => {
    assert.throws(() => checkGrammarSchema({ type: "object", properties: { a: { type: "text" } } }), {
      message:
        /schema\.properties\.a\.type: expected one of object, array, string, number, integer, boolean, null, got "text"/,
    });
    assert.throws(() => checkGrammarSchema({ $ref: "#/$defs/missing" }), {
      message: /^schema\.\$ref: \$ref "#\/\$defs\/missing" points at nothing/,
    });
    assert.throws(() => checkGrammarSchema({ $ref: "http://x/schema" }), {
      message: /only local references/,
    });
    assert.throws(() => checkGrammarSchema({ $ref: "#/__proto__" }), { message: /points at nothing/ });
    assert.throws(() => checkGrammarSchema({ type: "object", required: 5 }), {
      message: /^schema\.required: expected an array of property names/,
    });
  });

  it("refuses a $ref cycle that writes no output, naming the $ref and where it leads", () => {
    assert.throws(() => checkGrammarSchema({ $ref: "#" }, "response_format.json_schema.schema"), {
      message:
        /^response_format\.json_schema\.schema\.\$ref: "#" leads back to response_format\.json_schema\.schema with no output in between \(a \$ref cycle\)/,
    });
    const mutual = {
      $defs: { a: { anyOf: [{ type: "null" }, { $ref: "#/$defs/b" }] }, b: { $ref: "#/$defs/a" } },
      $ref: "#/$defs/a",
    };
    assert.throws(() => checkGrammarSchema(mutual), {
      message: /^schema\.\$defs\.b\.\$ref: "#\/\$defs\/a" leads back to schema\.\$defs\.a /,
    });
  });

  it("takes recursion inside an object's properties or an array's items", () => {
    checkGrammarSchema({
      type: "object",
      properties: {
        children: { type: "array", items: { $ref: "#" } },
        parent: { anyOf: [{ type: "null" }, { $ref: "#" }] },
      },
    });
  });

  it("counts a schema once per place it is used: 16 levels of two $refs to one place are small, 16 levels of two places are not", () => {
    const budget = new GrammarSizeBudget();
    checkGrammarSchema(chainOfChoices(16), "schema", budget);
    assert.ok(budget.used < 100, `${budget.used} states`);
    assert.throws(() => checkGrammarSchema(chainOfPairs(16), "response_format.json_schema.schema"), {
      message: new RegExp(
        `^response_format\\.json_schema\\.schema\\.\\$defs\\.l\\d+\\.properties\\.\\w: the request's schemas compile to more than ${MAX_GRAMMAR_STATES} grammar states`,
      ),
    });
  });

  it("shares one bound among the schemas of a request", () => {
    const budget = new GrammarSizeBudget();
    const wide = { enum: Array.from({ length: MAX_GRAMMAR_STATES / 2 }, (_, i) => i) };
    checkGrammarSchema(wide, "tools[0].function.parameters", budget);
    assert.throws(() => checkGrammarSchema(wide, "tools[1].function.parameters", budget), {
      message: /^tools\[1\]\.function\.parameters\.enum: the request's schemas compile to more than/,
    });
  });

  it("refuses schemas nested deeper than the bound, $ref hops included", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < MAX_SCHEMA_DEPTH; i++) deep = { type: "array", items: deep };
    assert.throws(() => checkGrammarSchema(deep), {
      message: new RegExp(`schemas nested more than ${MAX_SCHEMA_DEPTH} deep, \\$ref hops included`),
    });
  });
});
