import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { type Feedback, Trace } from "../trace/index.ts";
import { DetectorRegistry } from "./detector-registry.ts";

interface Fixture {
  name: string;
  expect: { status: string; class?: string; path?: string };
  feedback?: Feedback[];
  trace: unknown;
}

const fixtures: Fixture[] = JSON.parse(
  readFileSync(new URL("../__fixtures__/detect-traces.json", import.meta.url), "utf8"),
);

describe("detectors on real traces", () => {
  const registry = new DetectorRegistry();
  for (const fixture of fixtures) {
    it(`judges ${fixture.name} as ${fixture.expect.status}${fixture.expect.class ? ` (${fixture.expect.class})` : ""}`, async () => {
      const judgement = await registry.judge(Trace.parse(fixture.trace), fixture.feedback);
      assert.equal(judgement.status, fixture.expect.status, JSON.stringify(judgement.verdicts, null, 1));
      if (fixture.expect.class) assert.equal(judgement.primary?.class, fixture.expect.class);
      if (fixture.expect.path) assert.equal(judgement.primary?.path, fixture.expect.path);
      for (const v of judgement.verdicts) assert.equal(v.traceId, judgement.traceId);
      if (judgement.primary) {
        assert.ok(judgement.primary.evidence.message.length > 0);
        assert.ok(
          judgement.primary.stepId ||
            judgement.primary.class === "latency_over_budget" ||
            judgement.primary.class === "user_feedback",
        );
      }
    });
  }

  it("points a multi-turn failure at the step that went wrong", async () => {
    const loop = fixtures.find((f) => f.name === "a lookup loop")!;
    const judgement = await registry.judge(Trace.parse(loop.trace));
    assert.equal(judgement.primary?.stepId, "s2");
    assert.match(judgement.primary?.evidence.message ?? "", /lookup_order called 4 times/);
  });

  it("keeps the evidence a person needs: expected and actual values of a wrong argument", async () => {
    const arg = fixtures.find((f) => f.name === "a wrong argument")!;
    const { primary } = await registry.judge(Trace.parse(arg.trace));
    assert.deepEqual(
      [primary?.evidence.expected, primary?.evidence.actual, primary?.severity],
      ["c", "f", "medium"],
    );
  });

  it("flags a tool call whose arguments are not JSON where no verifier reads the trace, and leaves it to one that does", async () => {
    const trace = (env?: string) =>
      Trace.parse({
        id: `t-args-${env ?? "none"}`,
        startedAt: "2026-11-27T00:00:00Z",
        ...(env ? { env } : {}),
        steps: [
          {
            id: "s1",
            kind: "llm",
            startedAt: "2026-11-27T00:00:00Z",
            llm: {
              model: "m",
              messages: [{ role: "user", content: "weather in Oslo?" }],
              output: {
                content: null,
                toolCalls: [
                  { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Os' } },
                ],
              },
            },
          },
        ],
      });
    const free = await registry.judge(trace());
    assert.equal(free.primary?.detectorId, "malformed_tool_arguments");
    assert.equal(free.primary?.evidence.actual, '{"city":"Os');
    const verified = await registry.judge(trace("toolcall"));
    assert.ok(verified.verdicts.every((v) => v.detectorId !== "malformed_tool_arguments"));
    assert.equal(verified.primary?.detectorId, "verifier");
  });

  it("checks tool calls against the tools recorded on their step, naming the failing path", async () => {
    const weather = {
      type: "function",
      function: {
        name: "get_weather",
        parameters: {
          type: "object",
          properties: { city: { type: "string" }, unit: { type: "string", enum: ["c", "f"] } },
          required: ["city", "unit"],
          additionalProperties: false,
        },
      },
    };
    const trace = (name: string, args: string) =>
      Trace.parse({
        id: `t-schema-${name}-${args.length}`,
        startedAt: "2026-11-27T00:00:00Z",
        steps: [
          {
            id: "s1",
            kind: "llm",
            startedAt: "2026-11-27T00:00:00Z",
            llm: {
              messages: [{ role: "user", content: "weather in Oslo?" }],
              tools: [weather],
              output: {
                content: null,
                toolCalls: [{ id: "c1", type: "function", function: { name, arguments: args } }],
              },
            },
          },
        ],
      });
    const bad = (await registry.judge(trace("get_weather", '{"city":"Oslo","unit":"k"}'))).primary;
    assert.equal(bad?.detectorId, "tool_schema");
    assert.equal(bad?.class, "schema_violation");
    assert.equal(bad?.path, "get_weather.arguments/unit");
    assert.match(bad?.evidence.message ?? "", /must be equal to one of the allowed values/);
    const missing = (await registry.judge(trace("get_weather", '{"city":"Oslo"}'))).primary;
    assert.match(missing?.evidence.message ?? "", /must have required property 'unit'/);
    const other = (await registry.judge(trace("book_table", "{}"))).primary;
    assert.deepEqual([other?.class, other?.path], ["wrong_tool", "book_table"]);
    const good = await registry.judge(trace("get_weather", '{"city":"Oslo","unit":"c"}'));
    assert.ok(
      good.verdicts.every((v) => !v.failed),
      JSON.stringify(good.verdicts),
    );
  });
});
