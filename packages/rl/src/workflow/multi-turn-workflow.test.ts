import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateOrderdeskTasks, type OrderdeskSolution, orderdeskFamily } from "@arc/core/families";
import { ScriptedInferenceEngine } from "./__fixtures__/scripted-inference-engine.ts";
import { MultiTurnWorkflow } from "./multi-turn-workflow.ts";

const task = generateOrderdeskTasks({ split: "train", seed: 9, count: 20 }).find(
  (t) => t.meta?.action === "refund_order",
)!;
const solution = task.solution as OrderdeskSolution;
const [lookup, refund] = orderdeskFamily.reference(task);

describe("multi-turn workflow on the order desk", () => {
  it("looks up, sees the order in a tool message, acts on it, and earns the final-state reward", async () => {
    const engine = new ScriptedInferenceEngine((req) => {
      const last = req.messages?.at(-1);
      if (last?.role === "user") return lookup;
      const order = JSON.parse(last?.content ?? "{}");
      return JSON.stringify({ tool: "refund_order", args: { order_id: order.id, amount: order.total } });
    });
    const trajectory = await new MultiTurnWorkflow().runEpisode(engine, task);
    assert.ok(trajectory);
    assert.equal(trajectory.reward, 1);
    assert.equal(trajectory.turns.length, 2);
    assert.equal(trajectory.turns[1].text, refund);
    assert.deepEqual(JSON.parse(engine.requests[1].messages?.at(-1)?.content ?? ""), {
      id: solution.order.id,
      status: "delivered",
      total: solution.order.total,
    });
    assert.equal(trajectory.info.truncated, false);
  });

  it("gives no reward to a partial refund", async () => {
    const engine = new ScriptedInferenceEngine((req) =>
      req.messages?.length === 1
        ? lookup
        : JSON.stringify({ tool: "refund_order", args: { order_id: solution.order.id, amount: 1 } }),
    );
    assert.equal((await new MultiTurnWorkflow().runEpisode(engine, task))?.reward, 0);
  });

  it("keeps an episode that loops on lookups until the turn limit, unrewarded", async () => {
    const engine = new ScriptedInferenceEngine(() => lookup);
    const trajectory = await new MultiTurnWorkflow({ maxTurns: 3 }).runEpisode(engine, task);
    assert.equal(trajectory?.turns.length, 3);
    assert.equal(trajectory?.reward, 0);
    assert.equal(trajectory?.info.truncated, true);
  });

  it("rejects an aborted episode", async () => {
    const engine = new ScriptedInferenceEngine(() => ({ text: "", finishReason: "abort" }));
    assert.equal(await new MultiTurnWorkflow().runEpisode(engine, task), null);
  });
});
