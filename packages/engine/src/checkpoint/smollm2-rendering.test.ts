/**
 * One rendering for serving and training on SmolLM2-135M-Instruct, whose imported template writes tools in Hermes
 * tags: a training example's prompt is the prompt the gateway and `arc engine serve` render (tools included), and its
 * tool-call reply, given in Arc's answer text as families write it, is trained as the very text the tool grammar makes
 * the model write when it is served, which the server parses back to the call and verifiers read.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { parseToolCall } from "@arc/core";
import { hermesFormat } from "../server/tool-calls/tool-call-format.ts";
import { type ChatTokenizer, loadChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { smollm2Checkpoint, smollm2Unavailable } from "./__fixtures__/smollm2.ts";
import { SMOLLM2_CONVERSATIONS } from "./__fixtures__/smollm2-conversations.ts";

describe("SmolLM2's rendering for serving and training", { skip: smollm2Unavailable() }, () => {
  let tokenizer: ChatTokenizer;
  before(async () => {
    tokenizer = await loadChatTokenizer(await smollm2Checkpoint());
  });

  it("reads tool calls in the Hermes format", () => {
    assert.equal(tokenizer.toolCallSyntax, "hermes");
  });

  it("trains a tool call as the text its grammar makes the model write, which parses back to the call", () => {
    const { messages, tools = [] } = SMOLLM2_CONVERSATIONS[0];
    const reply = '{"tool":"get_weather","args":{"city":"Lyon","unit":"celsius"}}';
    const example = tokenizer.renderExample(messages, reply, { tools });
    assert.deepEqual(example.promptTokens, tokenizer.render(messages, { tools }));

    const [endOfTurn] = example.outputTokens.slice(-1);
    assert.ok(tokenizer.stopIds.has(endOfTurn));
    const text = tokenizer.decode(example.outputTokens.slice(0, -1));
    assert.equal(
      text,
      '<tool_call>{"name": "get_weather", "arguments": {"city":"Lyon","unit":"celsius"}}</tool_call>',
    );
    const grammar = hermesFormat.callGrammar(
      tools.map((t) => ({
        name: t.function.name,
        parameters: t.function.parameters as Record<string, unknown>,
      })),
    );
    const branch = grammar.kind === "any-of" ? grammar.grammars[0] : grammar;
    assert.ok(branch.kind === "json-schema");
    assert.equal(text, `${branch.before}{"city":"Lyon","unit":"celsius"}${branch.after}`);
    assert.deepEqual(hermesFormat.parse(text).toolCalls, [
      { name: "get_weather", arguments: '{"city":"Lyon","unit":"celsius"}' },
    ]);
    const read = parseToolCall(text);
    assert.deepEqual(read.ok && read.call, { tool: "get_weather", args: { city: "Lyon", unit: "celsius" } });
  });

  it("trains a reply that is not a tool call as it is", () => {
    const example = tokenizer.renderExample([{ role: "user", content: "Hi!" }], "Hello! How can I help?");
    assert.equal(tokenizer.decode(example.outputTokens), "Hello! How can I help?");
  });
});
