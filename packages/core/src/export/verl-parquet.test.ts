import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { simulatedFailureItems } from "../__fixtures__/failure-items.ts";
import { buildEvalSet, buildPromptPool } from "../synth/index.ts";
import {
  generateArithTasks,
  generateOrderdeskTasks,
  generateToolcallTasks,
  taskToRow,
} from "../tasks/index.ts";
import { toVerlParquet } from "./verl-parquet.ts";

/** Reads parquet bytes with an independent reader: parquet-wasm (Rust arrow-rs) → Arrow IPC → apache-arrow. */
function readBack(bytes: Uint8Array) {
  const table = tableFromIPC(readParquet(bytes).intoIPCStream());
  return {
    fields: table.schema.fields.map((f) => `${f.name}: ${f.type}`),
    rows: table.toArray().map((r) => JSON.parse(JSON.stringify(r.toJSON()))),
  };
}

const general = [
  ...generateToolcallTasks({ split: "eval", seed: 2, count: 30 }),
  ...generateArithTasks({ split: "eval", seed: 2, count: 10 }),
  ...generateOrderdeskTasks({ split: "eval", seed: 2, count: 10 }),
].map(taskToRow);
const evalSet = buildEvalSet({
  tenantId: "acme",
  seed: 1,
  failures: await simulatedFailureItems(33, 600),
  general,
  trainingQuestions: [],
  perPattern: 3,
  generalSize: 20,
});

describe("VERL parquet export", () => {
  it("writes VERL's columns with the types VERL reads: prompt a list of {role, content}, reward_model a struct", () => {
    const { fields } = readBack(toVerlParquet(evalSet.rows, { split: "test" }));
    assert.deepEqual(fields, [
      "data_source: Utf8",
      "prompt: List<Struct<{role:Utf8, content:Utf8}>>",
      "ability: Utf8",
      "reward_model: Struct<{style:Utf8, ground_truth:Utf8}>",
      "extra_info: Struct<{split:Utf8, index:Int32, id:Utf8, question:Utf8, pattern_id:Utf8, source_trace_ids:List<Utf8>}>",
    ]);
  });

  it("reads back every row as written, with the solution as ground truth and lineage in extra_info", () => {
    const { rows } = readBack(toVerlParquet(evalSet.rows, { split: "test" }));
    assert.equal(rows.length, evalSet.rows.length);
    for (const [i, row] of evalSet.rows.entries()) {
      const got = rows[i];
      assert.equal(got.data_source, `arc/${row.env}`);
      const prompt = row.context?.messages ?? [{ role: "user", content: row.question }];
      assert.deepEqual(
        got.prompt,
        prompt.map((m) => ({ role: m.role, content: m.content ?? "" })),
      );
      assert.equal(got.ability, row.env === "arith" ? "math" : "tool_use");
      assert.equal(got.reward_model.style, "rule");
      assert.deepEqual(JSON.parse(got.reward_model.ground_truth), row.solution);
      assert.deepEqual(got.extra_info, {
        split: "test",
        index: i,
        id: row.id,
        question: row.question,
        pattern_id: row.meta.patternId ?? null,
        source_trace_ids: row.meta.sourceTraceIds,
      });
    }
  });

  it("exports a PromptPool with the caller's data_source and ability", () => {
    const pool = buildPromptPool({
      tenantId: "acme",
      seed: 1,
      failures: [],
      replay: general,
      size: 12,
      evalSets: [],
    });
    const { rows } = readBack(
      toVerlParquet(pool.rows, { split: "train", dataSource: "acme/agent", ability: "agent" }),
    );
    assert.equal(rows.length, 12);
    assert.ok(
      rows.every(
        (r) => r.data_source === "acme/agent" && r.ability === "agent" && r.extra_info.split === "train",
      ),
    );
  });

  it("is byte-for-byte the same for the same rows", () => {
    assert.deepEqual(
      toVerlParquet(evalSet.rows, { split: "test" }),
      toVerlParquet(evalSet.rows, { split: "test" }),
    );
  });
});
