import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { toPreferenceJsonl } from "@arc/core";
import { parseRecipe } from "../recipe/index.ts";
import type { RenderExample } from "./engine-factory.ts";
import { loadTrainingData } from "./training-data.ts";

/** Renders text as its character codes, prompt as the joined contents: enough to check what went where. */
const render: RenderExample = (messages, reply) => ({
  promptTokens: [...messages.map((m) => m.content ?? "").join("|")].map((c) => c.charCodeAt(0)),
  outputTokens: [...reply].map((c) => c.charCodeAt(0)),
});
const text = (tokens: number[]) => String.fromCharCode(...tokens);

describe("loadTrainingData", () => {
  it("trains on a PromptPool exported as question/solution JSONL instead of the generated split", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-pool-")), "pool.jsonl");
    const solution = { tool: "get_weather", args: { city: "Oslo" } };
    await writeFile(
      path,
      `${JSON.stringify({ question: "Weather in Oslo?", solution, env: "toolcall", meta: { id: "tr1" } })}\n`,
    );
    const data = await loadTrainingData(parseRecipe({ data: { prompts: path, evalCount: 0 } }), render);
    assert.equal(data.prompts.length, 1);
    assert.equal(data.prompts[0].question, "Weather in Oslo?");
    assert.deepEqual(data.prompts[0].solution, solution);
    assert.equal(data.prompts[0].env, "toolcall");
  });

  it("rejects a PromptPool row without a question, naming the file and line", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-pool-")), "pool.jsonl");
    await writeFile(
      path,
      `${JSON.stringify({ question: "ok?", solution: 1 })}\n${JSON.stringify({ solution: 2 })}\n`,
    );
    await assert.rejects(
      loadTrainingData(parseRecipe({ data: { prompts: path, evalCount: 0 } }), render),
      (error: Error) => error.message.includes(`${path}:2`) && error.message.includes("question"),
    );
  });

  it("reads production preference pairs exported as preference JSONL for DPO to mix in", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-prefs-")), "prefs.jsonl");
    const jsonl = toPreferenceJsonl([
      {
        id: "p1",
        env: "toolcall",
        prompt: [{ role: "user", content: "Book Nobu" }],
        chosen: "good",
        rejected: "bad",
        meta: { sourceTraceIds: ["tr1"], chosenSource: "human", chosenVerified: true },
      },
    ]);
    await writeFile(path, jsonl);
    const recipe = parseRecipe({ data: { preferences: path, count: 4, evalCount: 2 } });
    const data = await loadTrainingData(recipe, render);
    assert.equal(data.preferences.length, 1);
    assert.equal(text(data.preferences[0].promptTokens), "Book Nobu");
    assert.equal(text(data.preferences[0].chosenTokens), "good");
    assert.equal(text(data.preferences[0].rejectedTokens), "bad");
    assert.equal(data.prompts.length, 4);
    assert.equal(data.evalTasks.length, 2);
  });

  it("names the line and field of a malformed preference row", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-prefs-")), "prefs.jsonl");
    await writeFile(path, `${JSON.stringify({ prompt: "q", chosen: 3, rejected: "r" })}\n`);
    await assert.rejects(
      loadTrainingData(parseRecipe({ data: { preferences: path } }), render),
      /prefs\.jsonl:1\.chosen: expected a string or \[\{role, content\}\], got 3/,
    );
  });

  it("trains SFT on a PromptPool's reference answers, arguments in the tool's order as stored rows reorder them", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-pool-")), "pool.jsonl");
    // as exported from PostgreSQL: jsonb sorted the keys (args before tool, date before people and place)
    const solution = { args: { date: "2026-03-05", place: "Nobu", people: 2 }, tool: "book_table" };
    await writeFile(
      path,
      `${JSON.stringify({ question: "Table for 2 at Nobu, March 5 please.", solution, env: "toolcall" })}\n`,
    );
    const recipe = parseRecipe({ trainer: { algorithm: "sft" }, data: { prompts: path, evalCount: 0 } });
    const data = await loadTrainingData(recipe, render);
    assert.deepEqual(
      data.examples.map((e) => [e.messages.at(-1)?.content, e.reply]),
      [
        [
          "Table for 2 at Nobu, March 5 please.",
          '{"tool":"book_table","args":{"people":2,"place":"Nobu","date":"2026-03-05"}}',
        ],
      ],
    );
  });

  it("builds SFT examples with the requested share of guided prompts", async () => {
    const recipe = parseRecipe({
      trainer: { algorithm: "sft" },
      data: { split: "train", count: 100, guidedFraction: 0.5 },
    });
    const data = await loadTrainingData(recipe, render);
    const guided = data.examples.filter((e) => e.guided).length;
    assert.ok(guided > 30 && guided < 70, `${guided} guided of 100`);
  });
});
