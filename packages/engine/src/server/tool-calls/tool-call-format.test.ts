import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arcJsonFormat, hermesFormat } from "./tool-call-format.ts";

describe("tool-call formats", () => {
  it("reads Arc's byte models' call, keeping the arguments as written", () => {
    assert.deepEqual(arcJsonFormat.parse('{"tool":"get_weather","args":{"city":"Paris","unit":"c"}}'), {
      content: null,
      toolCalls: [{ name: "get_weather", arguments: '{"city":"Paris","unit":"c"}' }],
    });
    assert.deepEqual(arcJsonFormat.parse('{"tool": "f", "args": {"a": 1}}'), {
      content: null,
      toolCalls: [{ name: "f", arguments: '{"a": 1}' }],
    });
  });

  it("returns malformed arguments as the model wrote them, never repaired", () => {
    assert.deepEqual(arcJsonFormat.parse('{"tool":"f","args":{"city":"Par'), {
      content: null,
      toolCalls: [{ name: "f", arguments: '{"city":"Par' }],
    });
    assert.deepEqual(arcJsonFormat.parse('{"tool":"f","args":{"a":1,}}').toolCalls[0].arguments, '{"a":1,}');
    assert.deepEqual(
      arcJsonFormat.parse('{"tool":"f","args":{"a":{"b":1}}').toolCalls[0].arguments,
      '{"a":{"b":1}}',
    );
  });

  it("leaves text that is not a call as content", () => {
    assert.deepEqual(arcJsonFormat.parse("It is 3 °C."), { content: "It is 3 °C.", toolCalls: [] });
    assert.deepEqual(arcJsonFormat.parse('{"answer":1}'), { content: '{"answer":1}', toolCalls: [] });
  });

  it("holds back, while streaming, only what is or may become a call", () => {
    assert.equal(arcJsonFormat.contentLength('{"to'), 0);
    assert.equal(arcJsonFormat.contentLength('{"tool":"f","ar'), 0);
    assert.equal(arcJsonFormat.contentLength('{"answer'), 8);
    assert.equal(arcJsonFormat.contentLength("Sure"), 4);
    assert.equal(hermesFormat.contentLength("Let me check.<tool_c"), 13);
    assert.equal(hermesFormat.contentLength('Let me check.<tool_call>{"name"'), 13);
    assert.equal(hermesFormat.contentLength("a < b"), 5);
    assert.equal(hermesFormat.contentLength("a <"), 2);
  });

  it("reads Hermes calls after content, several of them, and a cut-off last one", () => {
    const text =
      'Checking.\n<tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>\n<tool_call>{"name": "book_table", "arguments": {"people": 7';
    assert.deepEqual(hermesFormat.parse(text), {
      content: "Checking.",
      toolCalls: [
        { name: "get_weather", arguments: '{"city": "Oslo"}' },
        { name: "book_table", arguments: '{"people": 7' },
      ],
    });
    assert.deepEqual(hermesFormat.parse("<tool_call>not json</tool_call>").toolCalls, []);
  });
});
