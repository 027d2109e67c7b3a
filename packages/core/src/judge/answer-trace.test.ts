import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { answerTrace } from "./answer-trace.ts";
import { judgedTranscript } from "./judge-prompt.ts";

const MESSAGES = [{ role: "user", content: "Table for 2 at Nobu." }];
const TOOLS = [{ type: "function", function: { name: "book_table", parameters: { type: "object" } } }];

describe("answerTrace", () => {
  it("records a call of an offered tool as a tool call, as the gateway records a model's", () => {
    const trace = answerTrace(MESSAGES, TOOLS, '{"tool":"book_table","args":{"people":2,"place":"Nobu"}}');
    const output = trace.steps[0].llm?.output;
    assert.equal(output?.content, null);
    assert.deepEqual(output?.toolCalls?.[0].function, {
      name: "book_table",
      arguments: '{"people":2,"place":"Nobu"}',
    });
    assert.match(
      judgedTranscript(trace),
      /answer to judge\] \n {2}calls book_table\(\{"people":2,"place":"Nobu"\}\)$/,
    );
  });

  it("keeps prose, malformed JSON and a tool nobody offered as text", () => {
    for (const answer of ["Booked!", '{"tool":"book_table","args":', '{"tool":"refund","args":{}}'])
      assert.deepEqual(answerTrace(MESSAGES, TOOLS, answer).steps[0].llm?.output, { content: answer });
    const untooled = '{"tool":"book_table","args":{}}';
    assert.deepEqual(answerTrace(MESSAGES, undefined, untooled).steps[0].llm?.output, { content: untooled });
  });

  it("names the same answer to the same prompt the same, and a different answer differently", () => {
    const a = answerTrace(MESSAGES, TOOLS, "Booked!");
    assert.equal(a.id, answerTrace(MESSAGES, TOOLS, "Booked!").id);
    assert.notEqual(a.id, answerTrace(MESSAGES, TOOLS, "Booked.").id);
  });
});
