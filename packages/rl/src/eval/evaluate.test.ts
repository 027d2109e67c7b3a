import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toOpenAiTools } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import { ScriptedInferenceEngine } from "../workflow/__fixtures__/scripted-inference-engine.ts";
import { evaluate, sampledPassRate } from "./evaluate.ts";

describe("evaluate", () => {
  it("measures the share of tasks whose greedy answer the verifier passes", async () => {
    const tasks = toolcallFamily.generate({ split: "production", seed: 4, count: 10 });
    const answers = new Map(tasks.map((t, i) => [t.id, i % 2 === 0 ? toolcallFamily.reference(t)[0] : "{}"]));
    const engine = new ScriptedInferenceEngine((request) => answers.get(request.id ?? "") ?? "");
    const result = await evaluate(engine, tasks);
    assert.equal(result.accuracy, 0.5);
    assert.equal(result.failureRate, 0.5);
    assert.deepEqual(result.passed, [true, false, true, false, true, false, true, false, true, false]);
    assert.ok(engine.requests.every((r) => r.temperature === 0));
  });

  it("asks a task that carries the agent's recorded prompt with its messages and tools", async () => {
    const [task] = toolcallFamily.generate({ split: "production", seed: 4, count: 1 });
    const context = {
      messages: [
        { role: "system", content: "You are Acme's assistant." },
        { role: "user", content: task.question },
      ],
      tools: toOpenAiTools(toolcallFamily.tools),
    };
    const engine = new ScriptedInferenceEngine(() => toolcallFamily.reference(task)[0]);
    assert.equal((await evaluate(engine, [{ ...task, context }])).accuracy, 1);
    assert.deepEqual(engine.requests[0].messages, context.messages);
    assert.deepEqual(engine.requests[0].tools, context.tools);
  });

  it("refuses an empty task list", async () => {
    await assert.rejects(evaluate(new ScriptedInferenceEngine(() => ""), []), /at least one task/);
  });
});

describe("sampledPassRate", () => {
  it("counts a task passed at k when any of its k samples passes", async () => {
    const tasks = toolcallFamily.generate({ split: "production", seed: 5, count: 4 });
    const right = tasks.map((t) => toolcallFamily.reference(t)[0]);
    // task 0: every sample right; task 1: only the last of 4; tasks 2 and 3: none
    const engine = new ScriptedInferenceEngine((request, sample) => {
      const i = Number(request.id);
      return i === 0 || (i === 1 && sample === 3) ? right[i] : "{}";
    });
    const result = await sampledPassRate(engine, tasks, { samples: 4 });
    assert.equal(result.passAtK, 0.5);
    assert.equal(result.meanPass, 5 / 16);
    assert.deepEqual(result.passedPerTask, [4, 1, 0, 0]);
    assert.ok(engine.requests.every((r) => r.n === 4 && r.temperature === 1));
  });

  it("names the problem when the engine does not echo which request a result answers", async () => {
    const tasks = toolcallFamily.generate({ split: "production", seed: 5, count: 2 });
    const engine = new ScriptedInferenceEngine(() => "{}");
    const forgetful = {
      ...engine,
      generate: async (...args: Parameters<typeof engine.generate>) =>
        (await engine.generate(...args)).map(({ requestId: _, ...rest }) => rest),
    } as unknown as typeof engine;
    await assert.rejects(sampledPassRate(forgetful, tasks, { samples: 2 }), /expected the requestId/);
  });

  it("refuses a sample count that is not a positive integer", async () => {
    const tasks = toolcallFamily.generate({ split: "production", seed: 5, count: 1 });
    await assert.rejects(
      sampledPassRate(new ScriptedInferenceEngine(() => ""), tasks, { samples: 0 }),
      /samples: expected a positive integer/,
    );
  });
});
