import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Trace } from "../trace/index.ts";
import { DetectorRegistry } from "./detector-registry.ts";

/** A trace whose one LLM step offered `lookup` with `parameters` and called it with `args`. */
function traceCalling(id: string, parameters: unknown, args: unknown): Trace {
  return Trace.parse({
    id,
    startedAt: "2026-12-01T00:00:00Z",
    steps: [
      {
        id: "s1",
        kind: "llm",
        startedAt: "2026-12-01T00:00:00Z",
        llm: {
          messages: [{ role: "user", content: "look it up" }],
          tools: [{ type: "function", function: { name: "lookup", parameters } }],
          output: {
            content: null,
            toolCalls: [
              { id: "c1", type: "function", function: { name: "lookup", arguments: JSON.stringify(args) } },
            ],
          },
        },
      },
    ],
  });
}

const toolSchemaVerdict = async (registry: DetectorRegistry, trace: Trace) => {
  const judgement = await registry.judge(trace);
  const verdict = judgement.verdicts.find((v) => v.detectorId === "tool_schema");
  return { judgement, verdict };
};

describe("the tool_schema detector on schemas a tenant sends", () => {
  it("judges a call against ^(a+)+$ with 32 a's and ! in well under a second", async () => {
    const parameters = { type: "object", properties: { code: { type: "string", pattern: "^(a+)+$" } } };
    const started = performance.now();
    const { verdict } = await toolSchemaVerdict(
      new DetectorRegistry(),
      traceCalling("redos", parameters, { code: `${"a".repeat(32)}!` }),
    );
    const ms = performance.now() - started;
    assert.ok(ms < 1_000, `took ${ms} ms`);
    assert.equal(verdict?.class, "schema_violation");
    assert.equal(verdict?.path, "lookup.arguments/code");
    assert.match(verdict?.evidence.message ?? "", /must match pattern "\^\(a\+\)\+\$"/);
  });

  it("keeps one tenant's $id from another: B's $ref to it never shows A's enum, B's own $id is checked", async () => {
    const id = "https://tenant.example/schemas/lookup";
    const tenantA = new DetectorRegistry();
    const tenantB = new DetectorRegistry();
    const secret = { $id: id, type: "object", properties: { v: { type: "string", enum: ["A-SECRET"] } } };
    const a = await toolSchemaVerdict(tenantA, traceCalling("a", secret, { v: "other" }));
    assert.deepEqual(a.verdict?.evidence.expected, { allowedValues: ["A-SECRET"] });

    const b = await toolSchemaVerdict(tenantB, traceCalling("b-ref", { $ref: id }, { v: "B" }));
    assert.doesNotMatch(JSON.stringify(b.judgement), /A-SECRET/);
    assert.equal(b.verdict?.status, "unknown");
    assert.match(
      b.verdict?.evidence.message ?? "",
      /could not be checked against its schema: can't resolve reference/,
    );

    const own = { $id: id, type: "object", properties: { v: { type: "string", enum: ["B-OK"] } } };
    const mine = await toolSchemaVerdict(tenantB, traceCalling("b-own", own, { v: "A-SECRET" }));
    assert.equal(mine.verdict?.class, "schema_violation");
    assert.deepEqual(mine.verdict?.evidence.expected, { allowedValues: ["B-OK"] });
    assert.equal(
      (await toolSchemaVerdict(tenantB, traceCalling("b-ok", own, { v: "B-OK" }))).verdict,
      undefined,
    );
  });

  it("says unknown, naming the bound, for a schema whose check runs past it, and keeps judging", async () => {
    const $defs: Record<string, unknown> = { l24: { type: "string" } };
    for (let i = 0; i < 24; i++) {
      $defs[`l${i}`] = { anyOf: [{ $ref: `#/$defs/l${i + 1}` }, { $ref: `#/$defs/l${i + 1}` }] };
    }
    const started = performance.now();
    const { judgement, verdict } = await toolSchemaVerdict(
      new DetectorRegistry(),
      traceCalling("exponential", { $defs, $ref: "#/$defs/l0" }, { v: 1 }),
    );
    const ms = performance.now() - started;
    assert.ok(ms < 2_000, `took ${ms} ms`);
    assert.equal(judgement.status, "unknown");
    assert.equal(verdict?.status, "unknown");
    assert.match(verdict?.evidence.message ?? "", /took more than \d+ ms/);
  });
});
