import assert from "node:assert/strict";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { parseRecipe } from "../recipe/index.ts";
import { writeVerlData } from "./verl-data.ts";

const rowsOf = async (file: string) =>
  tableFromIPC(readParquet(await readFile(file)).intoIPCStream())
    .toArray()
    .map((r) => JSON.parse(JSON.stringify(r.toJSON())));

describe("a VERL job's data", () => {
  it("writes the generated split and held-out tasks, each prompt with the family's tools in its system message", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-verl-data-"));
    const recipe = parseRecipe({
      data: { env: "toolcall", count: 24, evalCount: 6 },
      trainer: { backend: "verl", algorithm: "grpo", promptsPerStep: 8 },
    });
    const data = await writeVerlData(recipe, dir);
    assert.deepEqual([data.trainRows, data.valRows, data.validation], [24, 6, "held-out tasks"]);
    const [train, val] = await Promise.all([rowsOf(data.trainFile), rowsOf(data.valFile)]);
    assert.equal(train.length, 24);
    assert.equal(val[0].extra_info.split, "test");
    assert.equal(train[0].prompt[0].role, "system");
    assert.match(
      train[0].prompt[0].content,
      /<tools>\n\{"type":"function","function":\{"name":"get_weather"/,
    );
  });

  it("writes a PromptPool's rows with their recorded prompts, validating on its first rows without held-out tasks", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-verl-pool-"));
    const pool = join(dir, "pool.jsonl");
    const rows = Array.from({ length: 10 }, (_, i) => ({
      question: `Weather in Oslo, ${i}?`,
      solution: { tool: "get_weather", args: { city: "Oslo", unit: "c" } },
      env: "toolcall",
      context: {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: `Oslo ${i}?` },
        ],
      },
      meta: { source: "failure", sourceTraceIds: [`t${i}`], patternId: "p1" },
    }));
    await writeFile(pool, rows.map((r) => JSON.stringify(r)).join("\n"));
    const recipe = parseRecipe({
      data: { env: "toolcall", prompts: pool, evalCount: 0 },
      trainer: { backend: "verl", algorithm: "grpo", promptsPerStep: 8 },
    });
    const data = await writeVerlData(recipe, join(dir, "out"));
    assert.deepEqual([data.trainRows, data.valRows, data.validation], [10, 10, "prompt pool"]);
    const [first] = await rowsOf(data.trainFile);
    assert.deepEqual(first.prompt, [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Oslo 0?" },
    ]);
    assert.deepEqual(first.extra_info.source_trace_ids, ["t0"]);
    assert.equal(first.extra_info.pattern_id, "p1");
  });

  it("refuses a pool smaller than one step's prompts: VERL would take no step", async () => {
    const recipe = parseRecipe({
      data: { env: "toolcall", count: 4, evalCount: 0 },
      trainer: { backend: "verl", algorithm: "grpo", promptsPerStep: 8 },
    });
    await assert.rejects(
      writeVerlData(recipe, await mkdtemp(join(tmpdir(), "arc-verl-few-"))),
      /data\.count|4 prompts, fewer than one step's 8/,
    );
  });
});
