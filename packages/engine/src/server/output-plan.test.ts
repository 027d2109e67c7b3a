import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseChatRequest } from "./chat-request.ts";
import { finishReason, planOutput } from "./output-plan.ts";

const tool = (name: string) => ({
  type: "function",
  function: { name, parameters: { type: "object", properties: { x: { type: "integer" } }, required: ["x"] } },
});
const request = (extra: Record<string, unknown>) =>
  parseChatRequest({ model: "m", messages: [{ role: "user", content: "hi" }], ...extra }, 16);
const twoCalls =
  '<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call><tool_call>{"name": "b", "arguments": {"x": 2}}</tool_call>';

describe("output plan", () => {
  it("constrains required and named choices to calls, and leaves auto free", () => {
    const required = planOutput(
      request({ tools: [tool("a"), tool("b")], tool_choice: "required" }),
      "arc-json",
    );
    assert.equal(required.grammar?.kind, "any-of");
    assert.equal(required.grammar?.kind === "any-of" && required.grammar.grammars.length, 2);
    const named = planOutput(
      request({ tools: [tool("a"), tool("b")], tool_choice: { type: "function", function: { name: "b" } } }),
      "arc-json",
    );
    assert.equal(named.forcedFunction, "b");
    assert.deepEqual(
      named.grammar?.kind === "any-of" &&
        named.grammar.grammars.map((g) => g.kind === "json-schema" && g.before),
      ['{"tool":"b","args":'],
    );
    assert.equal(finishReason("stop", 1, named), "stop");
    const auto = planOutput(request({ tools: [tool("a")] }), "arc-json");
    assert.equal(auto.grammar, undefined);
    assert.equal(finishReason("stop", 1, auto), "tool_calls");
    assert.equal(finishReason("length", 1, auto), "length");
  });

  it("lets auto choose between a call and the requested JSON", () => {
    const plan = planOutput(
      request({ tools: [tool("a")], response_format: { type: "json_object" } }),
      "hermes",
    );
    assert.equal(plan.grammar?.kind, "any-of");
    assert.deepEqual(plan.grammar?.kind === "any-of" && plan.grammar.grammars.at(-1), {
      kind: "json-schema",
      schema: { type: "object" },
    });
  });

  it("reads content only under tool_choice none", () => {
    const plan = planOutput(request({ tools: [tool("a")], tool_choice: "none" }), "arc-json");
    assert.equal(plan.format, undefined);
  });

  it("reads one call per answer with parallel_tool_calls false", () => {
    assert.equal(
      planOutput(request({ tools: [tool("a"), tool("b")] }), "hermes").format?.parse(twoCalls).toolCalls
        .length,
      2,
    );
    const single = planOutput(
      request({ tools: [tool("a"), tool("b")], parallel_tool_calls: false }),
      "hermes",
    );
    assert.deepEqual(single.format?.parse(twoCalls).toolCalls, [{ name: "a", arguments: '{"x": 1}' }]);
    assert.throws(
      () => request({ parallel_tool_calls: "no" }),
      /parallel_tool_calls: expected true or false/,
    );
  });

  it("refuses tools for a model with no tool-call format, naming the param", () => {
    assert.throws(
      () => planOutput(request({ tools: [tool("a")] }), undefined),
      (e: { param?: string }) => {
        assert.equal(e.param, "tools");
        return true;
      },
    );
  });
});
