import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseToolCall } from "./parse-tool-call.ts";

describe("parseToolCall", () => {
  it("reads Arc's answer text, fenced or not", () => {
    for (const text of [
      '{"tool":"calc","args":{"expr":"1+2"}}',
      '```json\n{"tool":"calc","args":{"expr":"1+2"}}\n```',
    ])
      assert.deepEqual(parseToolCall(text), {
        ok: true,
        call: { tool: "calc", args: { expr: "1+2" } },
        value: { tool: "calc", args: { expr: "1+2" } },
      });
  });

  it("reads a call in Hermes tags as the same call", () => {
    const parsed = parseToolCall(' <tool_call>{"name": "calc", "arguments": {"expr":"1+2"}}</tool_call>\n');
    assert.equal(parsed.ok, true);
    assert.deepEqual(parsed.ok && parsed.call, { tool: "calc", args: { expr: "1+2" } });
  });

  it("says which step fails: an unfinished Hermes call is not JSON, one without a name is not a call", () => {
    const cut = parseToolCall('<tool_call>{"name": "calc", "arguments": {"expr":</tool_call>');
    assert.equal(!cut.ok && cut.stage, "json");
    const nameless = parseToolCall('<tool_call>{"arguments": {}}</tool_call>');
    assert.equal(!nameless.ok && nameless.stage, "shape");
    const prose = parseToolCall("I would call the calculator.");
    assert.equal(!prose.ok && prose.stage, "json");
  });
});
