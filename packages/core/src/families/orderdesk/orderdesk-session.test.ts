import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { OrderdeskSolution } from "./orderdesk.ts";
import { OrderdeskSession } from "./orderdesk-session.ts";

const solution: OrderdeskSolution = {
  order: { id: "A123", status: "delivered", total: 42.5, address: "12 Oak St", refunded: 0 },
  request: { kind: "refund" },
  calls: [
    { tool: "lookup_order", args: { order_id: "A123" } },
    { tool: "refund_order", args: { order_id: "A123", amount: 42.5 } },
  ],
  finalState: { id: "A123", status: "refunded", total: 42.5, address: "12 Oak St", refunded: 42.5 },
};

describe("order desk session", () => {
  it("shows the order on lookup and refunds it on the next turn", () => {
    const session = new OrderdeskSession(solution);
    const look = session.act('{"tool":"lookup_order","args":{"order_id":"A123"}}');
    assert.deepEqual(JSON.parse(look.observation), { id: "A123", status: "delivered", total: 42.5 });
    assert.equal(look.done, false);
    const act = session.act('{"tool":"refund_order","args":{"order_id":"A123","amount":42.5}}');
    assert.equal(act.done, true);
    assert.deepEqual(session.state, solution.finalState);
  });

  it("refuses to cancel a delivered order and leaves it unchanged", () => {
    const session = new OrderdeskSession(solution);
    const step = session.act('{"tool":"cancel_order","args":{"order_id":"A123"}}');
    assert.deepEqual(JSON.parse(step.observation), { error: "cannot cancel a delivered order" });
    assert.equal(session.state.status, "delivered");
    assert.equal(session.actedBeforeLookup, true);
  });

  it("ends the episode after the turn limit even if the agent keeps looking up", () => {
    const session = new OrderdeskSession(solution, 3);
    const call = '{"tool":"lookup_order","args":{"order_id":"A123"}}';
    assert.equal(session.act(call).done, false);
    assert.equal(session.act(call).done, false);
    assert.equal(session.act(call).done, true);
    assert.throws(() => session.act(call), /the episode is over/);
  });
});
