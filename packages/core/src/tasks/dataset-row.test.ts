import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidInputError } from "../errors/index.ts";
import { generateToolcallTasks } from "../families/toolcall/toolcall-tasks.ts";
import { readDatasetJsonl, rowToTask, taskToRow, writeDatasetJsonl } from "./dataset-row.ts";

describe("dataset JSONL rows", () => {
  it("round-trips tasks through JSONL with question, solution, env and meta", () => {
    const tasks = generateToolcallTasks({ split: "eval", seed: 2, count: 20 });
    const text = writeDatasetJsonl(tasks.map(taskToRow));
    assert.equal(text.split("\n").length, 21);
    assert.deepEqual(Object.keys(JSON.parse(text.split("\n")[0])), ["question", "solution", "env", "meta"]);
    const back = readDatasetJsonl(text).map((row, i) => rowToTask(row, `x${i}`));
    assert.deepEqual(
      back,
      tasks.map((t) => ({ ...t, meta: { ...t.meta, id: t.id } })),
    );
  });

  it("rejects a row without a question, naming the line and the field", () => {
    const text = `{"question":"q","solution":1,"env":"arith"}\n{"solution":1,"env":"arith"}\n`;
    assert.throws(
      () => readDatasetJsonl(text),
      (e: unknown) =>
        InvalidInputError.isInstance(e) && /line 2: question Required/.test((e as Error).message),
    );
  });

  it("rejects a line that is not JSON, naming the line", () => {
    assert.throws(
      () => readDatasetJsonl('{"question":\n'),
      /line 1: expected a JSON object, got invalid JSON/,
    );
  });
});
