import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TimeBudget } from "./run-within.ts";
import { SCHEMA_BOUNDS } from "./schema-bounds.ts";
import { TenantSchemas } from "./tenant-schemas.ts";

/** 32 `a`s and a `!`: `^(a+)+$` backtracks 2^32 ways on it in a backtracking engine. */
const REDOS_TEXT = `${"a".repeat(32)}!`;

/** `levels` $defs, each `anyOf` two `$ref`s to the next: 2^levels paths over the same value in Ajv. */
function exponentialSchema(levels: number): Record<string, unknown> {
  const $defs: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) {
    $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
  }
  $defs[`l${levels}`] = { type: "string" };
  return { $defs, $ref: "#/$defs/l0" };
}

const timed = <T>(work: () => T): { result: T; ms: number } => {
  const started = performance.now();
  const result = work();
  return { result, ms: performance.now() - started };
};

describe("a tenant's schemas, compiled and checked within their bounds", () => {
  it("matches a pattern that backtracks catastrophically in RegExp, ^(a+)+$ on 32 a's and !, in linear time", () => {
    const schemas = new TenantSchemas();
    const schema = { type: "object", properties: { code: { type: "string", pattern: "^(a+)+$" } } };
    const { result, ms } = timed(() => schemas.check(schema, { code: REDOS_TEXT }, new TimeBudget(1_000)));
    assert.equal(result.status, "invalid");
    assert.equal(result.status === "invalid" && result.error?.keyword, "pattern");
    assert.ok(ms < 500, `took ${ms} ms`);
    assert.equal(schemas.check(schema, { code: "aaa" }, new TimeBudget(1_000)).status, "valid");
  });

  it("stops an exponential anyOf/$ref schema at the bound on one check, and does not run it again", () => {
    const schemas = new TenantSchemas();
    const schema = exponentialSchema(24);
    const first = timed(() => schemas.check(schema, 1, new TimeBudget(10_000)));
    assert.equal(first.result.status, "unchecked");
    assert.match(
      first.result.status === "unchecked" ? first.result.reason : "",
      new RegExp(`checking a value took more than ${SCHEMA_BOUNDS.checkMs} ms, the bound on one check`),
    );
    assert.ok(first.ms < 1_000, `took ${first.ms} ms`);
    const again = timed(() => schemas.check(schema, 1, new TimeBudget(10_000)));
    assert.equal(again.result.status, "unchecked");
    assert.ok(again.ms < 20, `took ${again.ms} ms the second time`);
  });

  it("stops at what is left of the caller's budget, and checks the schema again under a fresh one", () => {
    const schemas = new TenantSchemas();
    const schema = { type: "object", properties: { x: { type: "integer" } } };
    const spent = new TimeBudget(0);
    const check = schemas.check(schema, { x: 1 }, spent);
    assert.equal(check.status, "unchecked");
    assert.match(check.status === "unchecked" ? check.reason : "", /took more than 0 ms together/);
    assert.equal(schemas.check(schema, { x: 1 }, new TimeBudget(1_000)).status, "valid");
  });

  it("says why it cannot check a schema that refers to itself on the same value, at once", () => {
    const { result, ms } = timed(() => new TenantSchemas().check({ $ref: "#" }, {}, new TimeBudget(1_000)));
    assert.equal(result.status, "unchecked");
    // the recursion ends at the stack's end or at the bound on one check, whichever comes first
    assert.match(
      result.status === "unchecked" ? result.reason : "",
      /Maximum call stack size exceeded|took more than 50 ms, the bound on one check/,
    );
    assert.ok(ms < 1_000, `took ${ms} ms`);
  });

  it("keeps a $id inside its own schema: another schema's $ref to it does not resolve, its own $id is checked", () => {
    const schemas = new TenantSchemas();
    const id = "https://example.com/shared-id";
    const secret = { $id: id, type: "string", enum: ["A-SECRET"] };
    assert.equal(schemas.check(secret, "A-SECRET", new TimeBudget(1_000)).status, "valid");
    const ref = schemas.check({ $ref: id }, "B", new TimeBudget(1_000));
    assert.equal(ref.status, "unchecked");
    assert.match(
      ref.status === "unchecked" ? ref.reason : "",
      /can't resolve reference https:\/\/example\.com\/shared-id/,
    );
    const own = schemas.check({ $id: id, type: "string", enum: ["B-OK"] }, "A-SECRET", new TimeBudget(1_000));
    assert.equal(own.status, "invalid");
    assert.deepEqual(own.status === "invalid" && own.error?.params, { allowedValues: ["B-OK"] });
  });

  it("names the bound a schema is over: its size, its depth, a pattern's length or syntax", () => {
    const reason = (schema: unknown) => {
      const check = new TenantSchemas().check(schema, "x", new TimeBudget(1_000));
      return check.status === "unchecked" ? check.reason : check.status;
    };
    const big = { type: "string", description: "d".repeat(SCHEMA_BOUNDS.maxSchemaBytes) };
    assert.match(reason(big), /the schema is 655\d\d bytes as JSON; the bound on a schema is 65536/);
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < SCHEMA_BOUNDS.maxSchemaDepth / 2; i++)
      deep = { type: "object", properties: { x: deep } };
    assert.match(reason(deep), /^properties\.x(\.properties\.x)+ is nested deeper than 32 levels/);
    const long = { type: "string", pattern: "a".repeat(SCHEMA_BOUNDS.maxPatternLength + 1) };
    assert.match(reason(long), /^pattern is 1001 characters; the bound on a pattern is 1000$/);
    assert.match(reason({ type: "string", pattern: "(a)\\1" }), /not in the RE2 syntax/);
  });
});
