import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { evaluateExpression } from "./calculator.ts";

describe("calculator", () => {
  it("evaluates with the usual precedence and parentheses", () => {
    assert.deepEqual(evaluateExpression("12*3+4"), { ok: true, value: 40 });
    assert.deepEqual(evaluateExpression("(2+3)*-4"), { ok: true, value: -20 });
    assert.deepEqual(evaluateExpression("84/7"), { ok: true, value: 12 });
  });

  it("reports division by zero and anything that is not arithmetic", () => {
    assert.deepEqual(evaluateExpression("4/0"), { ok: false, error: "division by zero" });
    assert.deepEqual(evaluateExpression("process.exit()"), { ok: false, error: 'unexpected "p"' });
    assert.deepEqual(evaluateExpression("3+"), { ok: false, error: "unexpected end of expression" });
  });
});
