import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SseAccumulator, summarizeCompletion } from "./completion-summary.ts";

const enc = new TextEncoder();

describe("SseAccumulator", () => {
  it("joins tool-call fragments split across events and chunk boundaries, with usage and finish reason", () => {
    const events = [
      {
        choices: [
          {
            index: 0,
            delta: {
              role: "assistant",
              tool_calls: [
                { index: 0, id: "c1", type: "function", function: { name: "get_", arguments: "" } },
              ],
            },
          },
        ],
      },
      {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { name: "weather", arguments: '{"city":' } }] },
          },
        ],
      },
      {
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] },
            finish_reason: "tool_calls",
          },
        ],
      },
      { choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } },
    ];
    const text = `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("")}data: [DONE]\n\n`;
    const acc = new SseAccumulator();
    for (let i = 0; i < text.length; i += 7) acc.push(enc.encode(text.slice(i, i + 7)));
    const s = acc.summary();
    assert.deepEqual(s.toolCalls, [
      { id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } },
    ]);
    assert.equal(s.content, null);
    assert.equal(s.finishReason, "tool_calls");
    assert.deepEqual(s.usage, { promptTokens: 5, completionTokens: 7, totalTokens: 12 });
  });

  it("skips events and fields of unexpected shapes, so a stream passes through whatever a server sends", () => {
    const acc = new SseAccumulator();
    const events = [
      "null",
      "5",
      '{"choices":[null,{"index":0,"delta":null}]}',
      '{"choices":"x","usage":"many"}',
      '{"choices":[{"index":0,"delta":{"content":5,"tool_calls":[null,{"index":"a","function":"f"}]}}]}',
      '{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":7}],"model":{}}',
    ];
    for (const e of events) acc.push(enc.encode(`data: ${e}\n\n`));
    const s = acc.summary();
    assert.equal(s.content, "ok");
    assert.deepEqual(s.toolCalls, [{ type: "function", function: { name: "", arguments: "" } }]);
    assert.equal(s.finishReason, undefined);
    assert.equal(s.model, undefined);
    assert.equal(s.usage, undefined);
  });

  it("makes the text it keeps storable: NUL and lone surrogates become U+FFFD", () => {
    const acc = new SseAccumulator();
    for (const piece of ["a\u0000", "b\ud800", "c"]) {
      acc.push(
        enc.encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`),
      );
    }
    assert.equal(acc.summary().content, "a\ufffdb\ufffdc");
  });

  it("keeps an error event sent inside a stream", () => {
    const acc = new SseAccumulator();
    acc.push(enc.encode('data: {"error":{"message":"generation failed: boom","type":"server_error"}}\n\n'));
    assert.equal(acc.summary().error?.message, "generation failed: boom");
  });
});

describe("summarizeCompletion", () => {
  it("reads the first choice's content, finish reason and usage", () => {
    const s = summarizeCompletion({
      model: "m",
      choices: [{ message: { content: "hi" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    });
    assert.equal(s.content, "hi");
    assert.equal(s.finishReason, "stop");
    assert.equal(s.usage?.completionTokens, 2);
  });

  it("reads a body of unexpected shapes as an empty answer, keeping only token counts that fit an integer column", () => {
    const s = summarizeCompletion({
      model: 5,
      choices: [{ message: { content: { text: "x" }, tool_calls: "x" }, finish_reason: null }],
      usage: { prompt_tokens: 3e9, completion_tokens: -1, total_tokens: "3" },
      error: "upstream exploded",
    });
    assert.deepEqual(s, {
      content: null,
      toolCalls: [],
      finishReason: undefined,
      usage: { promptTokens: undefined, completionTokens: undefined, totalTokens: undefined },
      model: undefined,
      error: { message: "upstream exploded" },
    });
    assert.deepEqual(summarizeCompletion("not an object").toolCalls, []);
  });
});
