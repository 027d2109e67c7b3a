import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateOrderdeskTasks, type OrderdeskSolution } from "./orderdesk.ts";
import { verifyOrderdesk } from "./verify-orderdesk.ts";

const solution: OrderdeskSolution = {
  order: { id: "B456", status: "delivered", total: 30, address: "4 Elm Rd", refunded: 0 },
  request: { kind: "refund" },
  calls: [
    { tool: "lookup_order", args: { order_id: "B456" } },
    { tool: "refund_order", args: { order_id: "B456", amount: 30 } },
  ],
  finalState: { id: "B456", status: "refunded", total: 30, address: "4 Elm Rd", refunded: 30 },
};
const lookup = '{"tool":"lookup_order","args":{"order_id":"B456"}}';
const judge = (...outputs: string[]) => verifyOrderdesk({ outputs, solution });

describe("orderdesk verifier", () => {
  it("passes a lookup followed by the full refund", () => {
    assert.equal(
      judge(lookup, '{"tool":"refund_order","args":{"order_id":"B456","amount":30}}').status,
      "pass",
    );
  });

  it("passes a decline where the policy forbids the request", () => {
    const task = generateOrderdeskTasks({ split: "train", seed: 4, count: 200 }).find(
      (t) => t.meta?.action === "decline",
    );
    const s = task?.solution as OrderdeskSolution;
    const out = s.calls.map((c) => JSON.stringify(c));
    assert.equal(verifyOrderdesk({ outputs: out, solution: s }).status, "pass");
  });

  it("fails an agent that acts before looking the order up", () => {
    const r = judge('{"tool":"refund_order","args":{"order_id":"B456","amount":30}}');
    assert.deepEqual([r.failure?.class, r.failure?.path], ["wrong_tool", "orderdesk.lookup_order"]);
  });

  it("fails a partial refund as a wrong argument", () => {
    const r = judge(lookup, '{"tool":"refund_order","args":{"order_id":"B456","amount":3}}');
    assert.deepEqual(
      [r.failure?.class, r.failure?.path, r.failure?.turn],
      ["wrong_argument", "refund_order.amount", 1],
    );
  });

  it("fails the wrong action with expected→actual", () => {
    const r = judge(lookup, '{"tool":"decline","args":{"order_id":"B456"}}');
    assert.deepEqual([r.failure?.class, r.failure?.path], ["wrong_tool", "refund_order→decline"]);
  });

  it("fails an episode that only ever looks up as incomplete", () => {
    assert.equal(judge(lookup, lookup, lookup, lookup).failure?.class, "incomplete");
  });

  it("fails malformed output on any turn as a parse error at that turn", () => {
    const r = judge(lookup, '{"tool":"refund_order"');
    assert.deepEqual([r.failure?.class, r.failure?.turn], ["parse_error", 1]);
  });
});
