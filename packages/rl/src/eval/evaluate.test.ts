import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toolcallFamily } from "@arc/core";
import { ScriptedInferenceEngine } from "../workflow/__fixtures__/scripted-inference-engine.ts";
import { evaluate } from "./evaluate.ts";

describe("evaluate", () => {
  it("measures the share of tasks whose greedy answer the verifier passes", async () => {
    const tasks = toolcallFamily.generate({ split: "production", seed: 4, count: 10 });
    const answers = new Map(tasks.map((t, i) => [t.id, i % 2 === 0 ? toolcallFamily.reference(t)[0] : "{}"]));
    const engine = new ScriptedInferenceEngine((request) => answers.get(request.id ?? "") ?? "");
    const result = await evaluate(engine, tasks);
    assert.equal(result.accuracy, 0.5);
    assert.equal(result.failureRate, 0.5);
    assert.ok(engine.requests.every((r) => r.temperature === 0));
  });

  it("refuses an empty task list", async () => {
    await assert.rejects(evaluate(new ScriptedInferenceEngine(() => ""), []), /at least one task/);
  });
});
