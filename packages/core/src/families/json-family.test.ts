import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../errors/index.ts";
import { SCHEMA_BOUNDS } from "../schemas/index.ts";
import { jsonTaskFamily } from "./json-family.ts";

const spec = (parameters: Record<string, unknown>) => ({
  env: "codes",
  tools: [{ name: "redeem", parameters }],
});

/** The field and message a spec is refused with. */
function refusal(value: unknown): { field?: string; message: string } {
  try {
    jsonTaskFamily(value);
  } catch (error) {
    assert.ok(error instanceof InvalidInputError, String(error));
    return { field: error.field, message: error.message };
  }
  assert.fail("the spec was accepted");
}

describe("a task family given as data, held to the bounds on a tenant's schemas", () => {
  it("refuses a tool schema nested too deep, too large or with too long a pattern, naming the field and the bound", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < SCHEMA_BOUNDS.maxSchemaDepth / 2; i++)
      deep = { type: "object", properties: { x: deep } };
    const tooDeep = refusal(spec(deep));
    assert.match(tooDeep.field ?? "", /^tools\.0\.parameters\.properties\.x(\.properties\.x)+$/);
    assert.match(tooDeep.message, /nested deeper than 32 levels, the bound on a schema/);

    const big = refusal(spec({ type: "object", description: "d".repeat(SCHEMA_BOUNDS.maxSchemaBytes) }));
    assert.equal(big.field, "tools.0.parameters");
    assert.match(big.message, /bytes as JSON; the bound on a schema is 65536/);

    const pattern = "a".repeat(SCHEMA_BOUNDS.maxPatternLength + 1);
    const long = refusal(spec({ type: "object", properties: { code: { type: "string", pattern } } }));
    assert.equal(long.field, "tools.0.parameters.properties.code.pattern");
    assert.match(long.message, /is 1001 characters; the bound on a pattern is 1000/);
  });

  it("verifies an answer against ^(a+)+$ with 32 a's and ! at once, and says unknown past the bound on matching", () => {
    const family = jsonTaskFamily(
      spec({
        type: "object",
        properties: { code: { type: "string", pattern: "^(a+)+$" } },
        required: ["code"],
      }),
    );
    const verify = family.verify;
    assert.ok(verify);
    const solution = { tool: "redeem", args: { code: "aaaa" } };
    const answer = (code: string) => JSON.stringify({ tool: "redeem", args: { code } });
    const started = performance.now();
    const redos = verify({ outputs: [answer(`${"a".repeat(32)}!`)], solution });
    assert.ok(performance.now() - started < 500);
    assert.deepEqual([redos.status, redos.failure?.class], ["fail", "schema_violation"]);
    const huge = verify({ outputs: [answer("a".repeat(SCHEMA_BOUNDS.maxPatternWork))], solution });
    assert.equal(huge.status, "unknown");
    assert.match(huge.reason ?? "", /^redeem\.code could not be checked: matching 5000000 characters/);
    assert.equal(verify({ outputs: [answer("aaaa")], solution }).status, "pass");
  });
});
