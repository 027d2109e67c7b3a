import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verifyArith } from "./verify-arith.ts";

const solution = { answer: 40, expr: "12*3+4" };
const judge = (output: string) => verifyArith({ outputs: [output], solution });

describe("arith verifier", () => {
  it("passes a calculator call whose result is the answer, however it is written", () => {
    assert.equal(judge('{"tool":"calc","args":{"expr":"12*3+4"}}').status, "pass");
    assert.equal(judge('{"tool":"calc","args":{"expr":"4 + 3*12"}}').status, "pass");
    assert.equal(judge('{"answer":40}').status, "pass");
  });

  it("flags a calculation with another result as a wrong answer", () => {
    const r = judge('{"tool":"calc","args":{"expr":"12*3+5"}}');
    assert.deepEqual([r.failure?.class, r.failure?.expected, r.failure?.actual], ["wrong_answer", 40, 41]);
  });

  it("flags an expression the calculator cannot run as an execution error", () => {
    assert.deepEqual(judge('{"tool":"calc","args":{"expr":"12/0"}}').failure?.message, "division by zero");
  });

  it("flags prose as a parse error and another tool as wrong_tool", () => {
    assert.equal(judge("The answer is 40.").failure?.class, "parse_error");
    assert.equal(judge('{"tool":"get_weather","args":{}}').failure?.path, "calc→get_weather");
    assert.equal(judge('{"tool":"calc","args":{"expression":"1"}}').failure?.class, "schema_violation");
  });
});
