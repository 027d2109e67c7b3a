import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arcJsonFormat, hermesFormat, type ToolCallFormat } from "./tool-call-format.ts";

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
    assert.equal(arcJsonFormat.partial('{"to').contentLength, 0);
    assert.equal(arcJsonFormat.partial('{"tool":"f","ar').contentLength, 0);
    assert.equal(arcJsonFormat.partial('{"answer').contentLength, 8);
    assert.equal(arcJsonFormat.partial("Sure").contentLength, 4);
    assert.equal(hermesFormat.partial("Let me check.<tool_c").contentLength, 13);
    assert.equal(hermesFormat.partial('Let me check.<tool_call>{"name"').contentLength, 13);
    assert.equal(hermesFormat.partial("a < b").contentLength, 5);
    assert.equal(hermesFormat.partial("a <").contentLength, 2);
  });

  it("streams arguments that the finished output's parse only extends, whatever the cut", () => {
    const outputs: [ToolCallFormat, string][] = [
      [arcJsonFormat, '{"tool":"get_weather","args":{"city":"Paris","unit":"c"}}'],
      [arcJsonFormat, '{"tool": "f", "args": {"a": {"b": [1, 2]}} }'],
      [arcJsonFormat, '{"tool":"f","args":{"a":{"b":1}}'],
      [arcJsonFormat, '{"tool":"f","args":{"city":"Par'],
      [
        hermesFormat,
        'Checking.\n<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>\n<tool_call>{"name": "b", "arguments": {"y": "}"}}</tool_call>',
      ],
      [hermesFormat, '<tool_call>{"name": "a", "arguments": {"x": {"y": 2}'],
    ];
    for (const [format, text] of outputs) {
      const sent: string[] = [];
      for (let k = 1; k <= text.length; k++) {
        format.partial(text.slice(0, k)).calls.forEach((call, i) => {
          const before = sent[i] ?? "";
          assert.ok(call.arguments.startsWith(before), `${text} at ${k}: ${call.arguments} drops ${before}`);
          sent[i] = call.arguments;
        });
      }
      const final = format.parse(text).toolCalls;
      assert.equal(final.length, sent.length, text);
      for (const [i, call] of final.entries())
        assert.ok(call.arguments.startsWith(sent[i]), `${text}: ${call.arguments} vs ${sent[i]}`);
    }
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
