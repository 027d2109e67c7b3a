import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { toOpenAiTools } from "@arc/core";
import { generateArithTasks, generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import { ScriptedInferenceEngine } from "./__fixtures__/scripted-inference-engine.ts";
import { RlvrWorkflow } from "./rlvr-workflow.ts";

const [task] = generateToolcallTasks({ split: "train", seed: 11, count: 1 });
const right = toolcallFamily.reference(task)[0];

describe("RLVR workflow", () => {
  it("samples n answers to the task's prompt and rewards each with the verifier", async () => {
    const engine = new ScriptedInferenceEngine(
      (_req, i) => (i % 2 === 0 ? right : '{"tool":"nope","args":{}}'),
      { version: 3 },
    );
    const trajectory = await new RlvrWorkflow({
      n: 4,
      sampling: { temperature: 1, maxTokens: 96 },
    }).runEpisode(engine, task);
    assert.ok(trajectory);
    assert.deepEqual(trajectory.rewards, [1, 0, 1, 0]);
    assert.equal(trajectory.reward, 0.5);
    assert.equal(trajectory.turns.length, 4);
    assert.deepEqual(trajectory.versionRange, [3, 3]);
    assert.deepEqual(engine.requests[0].messages, [{ role: "user", content: task.question }]);
    assert.equal(engine.requests[0].n, 4);
    assert.equal(engine.requests[0].maxTokens, 96);
    assert.equal(
      (trajectory.info.verdicts as { failure?: { class: string } }[])[1].failure?.class,
      "wrong_tool",
    );
  });

  it("samples from the agent's recorded prompt and tools when the task carries them", async () => {
    const context = {
      messages: [
        { role: "system", content: "You are Acme's assistant." },
        { role: "user", content: task.question },
      ],
      tools: toOpenAiTools(toolcallFamily.tools),
    };
    const engine = new ScriptedInferenceEngine(() => right);
    const trajectory = await new RlvrWorkflow({ n: 2 }).runEpisode(engine, { ...task, context });
    assert.deepEqual(trajectory?.rewards, [1, 1]);
    assert.deepEqual(engine.requests[0].messages, context.messages);
    assert.deepEqual(engine.requests[0].tools, context.tools);
  });

  it("rejects the episode when a sample was aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const engine = new ScriptedInferenceEngine(() => right);
    assert.equal(await new RlvrWorkflow({ n: 2, signal: controller.signal }).runEpisode(engine, task), null);
  });

  it("rejects a group with uniform rewards only when asked to", async () => {
    const engine = new ScriptedInferenceEngine(() => right);
    assert.equal(await new RlvrWorkflow({ n: 3, rejectUniformRewards: true }).runEpisode(engine, task), null);
    assert.equal((await new RlvrWorkflow({ n: 3 }).runEpisode(engine, task))?.reward, 1);
  });

  it("rewards arith answers by the calculator result", async () => {
    const [problem] = generateArithTasks({ split: "eval", seed: 5, count: 1 });
    const answer = (problem.solution as { answer: number }).answer;
    const engine = new ScriptedInferenceEngine((_r, i) => JSON.stringify({ answer: answer + i }));
    const trajectory = await new RlvrWorkflow({ n: 2 }).runEpisode(engine, problem);
    assert.deepEqual(trajectory?.rewards, [1, 0]);
  });

  it("refuses a group size below one", () => {
    assert.throws(() => new RlvrWorkflow({ n: 0 }), /n: expected an integer >= 1, got 0/);
  });
});
