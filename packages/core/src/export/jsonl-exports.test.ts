import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  generateOrderdeskTasks,
  generateToolcallTasks,
  orderdeskFamily,
  toolcallFamily,
} from "../families/index.ts";
import { verifyTask } from "../families/verify-task.ts";
import { buildEvalSet, buildPreferenceSet } from "../synth/index.ts";
import { readDatasetJsonl, rowToTask, taskToRow } from "../tasks/index.ts";
import { chatExampleOf, chatExamplesFromPreferences } from "./chat-example.ts";
import { toChatJsonl } from "./chat-jsonl.ts";
import { toDatasetJsonl } from "./dataset-jsonl.ts";
import { toPreferenceJsonl } from "./preference-jsonl.ts";

const lines = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));

const weather = { tool: "get_weather", args: { city: "Oslo", unit: "c" } };

describe("JSONL exports", () => {
  it("writes OpenAI fine-tuning rows: the family's tools, and tool_calls that pass the task's verifier", () => {
    const rows = generateToolcallTasks({ split: "train", seed: 1, count: 20 }).map(taskToRow);
    const parsed = lines(toChatJsonl(rows.map((r) => chatExampleOf(r))));
    assert.equal(parsed.length, 20);
    for (const [i, line] of parsed.entries()) {
      assert.deepEqual(Object.keys(line), ["messages", "tools"]);
      assert.deepEqual(
        line.tools.map((t: { type: string; function: { name: string } }) => [t.type, t.function.name]),
        toolcallFamily.tools.map((t) => ["function", t.name]),
      );
      assert.deepEqual(line.messages[0], { role: "user", content: rows[i].question });
      const [answer] = line.messages.slice(1);
      assert.equal(answer.content, null);
      const [call] = answer.tool_calls;
      assert.equal(call.type, "function");
      const output = JSON.stringify({ tool: call.function.name, args: JSON.parse(call.function.arguments) });
      assert.equal(toolcallFamily.verify({ outputs: [output], solution: rows[i].solution }).status, "pass");
    }
  });

  it("keeps a row's recorded context verbatim: system prompt, earlier turns, tool results and tools", () => {
    const context = {
      messages: [
        { role: "system" as const, content: "You are a weather bot." },
        { role: "user" as const, content: [{ type: "text", text: "Weather in Oslo in celsius?" }] },
      ],
      tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }],
    };
    const row = { question: "Weather in Oslo in celsius?", solution: weather, env: "toolcall", context };
    const [line] = lines(toChatJsonl([chatExampleOf(row)]));
    assert.deepEqual(line.messages.slice(0, 2), context.messages);
    assert.deepEqual(line.tools, context.tools);
    assert.deepEqual(line.messages[2].tool_calls[0].function, {
      name: "get_weather",
      arguments: JSON.stringify(weather.args),
    });
    assert.throws(() => chatExampleOf({ ...row, solution: undefined }), /this row is reference-free/);
  });

  it("writes EvalSet rows as question/solution/env/meta JSONL that reads back into verifiable tasks", () => {
    const general = generateOrderdeskTasks({ split: "eval", seed: 4, count: 10 }).map(taskToRow);
    const set = buildEvalSet({
      tenantId: "acme",
      seed: 1,
      failures: [],
      general,
      trainingQuestions: [],
      generalSize: 10,
    });
    const back = readDatasetJsonl(toDatasetJsonl(set.rows));
    assert.equal(back.length, 10);
    for (const [i, row] of back.entries()) {
      const task = rowToTask(row, "x");
      assert.equal(task.id, set.rows[i].id);
      assert.deepEqual(row.meta.sourceTraceIds, []);
      assert.equal(verifyTask(task, orderdeskFamily.reference(task)).status, "pass");
    }
  });

  it("writes a multi-turn order desk conversation with the tool's observation between the calls", () => {
    const [row] = generateOrderdeskTasks({ split: "train", seed: 1, count: 1 }).map(taskToRow);
    const [line] = lines(toChatJsonl([chatExampleOf(row)]));
    assert.deepEqual(
      line.messages.map((m: { role: string; tool_call_id?: string }) => [m.role, m.tool_call_id]),
      [
        ["user", undefined],
        ["assistant", undefined],
        ["tool", "call_0"],
        ["assistant", undefined],
      ],
    );
    assert.equal(line.messages[1].tool_calls[0].function.name, "lookup_order");
    assert.equal(
      JSON.parse(line.messages[2].content).id,
      (row.solution as { order: { id: string } }).order.id,
    );
  });

  it("refuses a conversation that does not end with the assistant, naming the example", () => {
    assert.throws(
      () => toChatJsonl([{ messages: [{ role: "user", content: "hi" }] }]),
      /examples.0.messages: expected the last message to be the assistant's/,
    );
  });

  it("writes preference rows as prompt/chosen/rejected conversations with lineage", () => {
    const right = '{"tool":"get_weather","args":{"city":"Oslo","unit":"c"}}';
    const set = buildPreferenceSet({
      tenantId: "acme",
      seed: 1,
      failures: [
        {
          traceId: "t1",
          patternId: "pat_unit",
          env: "toolcall",
          question: "Weather in Oslo, celsius please.",
          context: { messages: [{ role: "user", content: "Weather in Oslo, celsius please." }] },
          solution: { tool: "get_weather", args: { city: "Oslo", unit: "c" } },
          output: '{"tool":"get_weather","args":{"city":"Oslo","unit":"f"}}',
        },
      ],
      candidates: { t1: [{ text: right, source: "human" }] },
      evalSets: [],
    });
    const [line] = lines(toPreferenceJsonl(set.rows));
    assert.deepEqual(line.prompt, [{ role: "user", content: "Weather in Oslo, celsius please." }]);
    assert.deepEqual(line.chosen, [{ role: "assistant", content: right }]);
    assert.deepEqual(line.rejected, [
      { role: "assistant", content: '{"tool":"get_weather","args":{"city":"Oslo","unit":"f"}}' },
    ]);
    assert.deepEqual(line.meta.sourceTraceIds, ["t1"]);
    assert.equal(line.meta.chosenSource, "human");
    const [sft] = lines(toChatJsonl(chatExamplesFromPreferences(set.rows)));
    assert.equal(sft.messages.at(-1).content, right);
  });
});
