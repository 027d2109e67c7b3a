import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { toOpenAiTools, toPreferenceJsonl } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";
import { loadChatTokenizer } from "@arc/engine";
import { sftBatch } from "../algo/sft-batch.ts";
import type { ChatExample } from "../data/index.ts";
import { parseRecipe } from "../recipe/index.ts";
import { engineFactory } from "../worker/engine-factory.ts";
import type { RenderExample } from "./engine-factory.ts";
import { hasSftData, loadTrainingData } from "./training-data.ts";

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

  it("teaches SFT each preference row's chosen answer with its prompt and tools, after the pool's references", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-prefs-")), "prefs.jsonl");
    const tools = [{ type: "function", function: { name: "book", parameters: { type: "object" } } }];
    await writeFile(
      path,
      toPreferenceJsonl([
        {
          id: "p1",
          env: "toolcall",
          prompt: [
            { role: "system", content: "You book tables." },
            { role: "user", content: "Book Nobu" },
          ],
          tools,
          chosen: '{"tool":"book","args":{"place":"Nobu"}}',
          rejected: "Sure!",
          meta: { sourceTraceIds: ["tr1"], chosenSource: "human", chosenVerified: false },
        },
      ]),
    );
    const recipe = parseRecipe({
      data: { preferences: path, count: 3, evalCount: 0 },
      trainer: { algorithm: "sft" },
    });
    const data = await loadTrainingData(recipe, render);
    assert.equal(data.examples.length, 4);
    assert.deepEqual(data.examples.at(-1), {
      messages: [
        { role: "system", content: "You book tables." },
        { role: "user", content: "Book Nobu" },
      ],
      tools,
      reply: '{"tool":"book","args":{"place":"Nobu"}}',
      guided: false,
    });
    assert.equal(data.preferences.length, 0);
  });

  it("lets SFT learn corrections alone when the pool's rows have no reference, and refuses such a pool otherwise", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-pool-"));
    const pool = join(dir, "pool.jsonl");
    await writeFile(pool, `${JSON.stringify({ question: "Book Nobu", env: "toolcall" })}\n`);
    const prefs = join(dir, "prefs.jsonl");
    await writeFile(
      prefs,
      `${JSON.stringify({ prompt: "Book Nobu", chosen: "fixed", rejected: "wrong" })}\n`,
    );
    const sft = parseRecipe({
      data: { prompts: pool, preferences: prefs, evalCount: 0 },
      trainer: { algorithm: "sft" },
    });
    const data = await loadTrainingData(sft, render);
    assert.deepEqual(
      data.examples.map((e) => e.reply),
      ["fixed"],
    );
    await assert.rejects(
      loadTrainingData(parseRecipe({ data: { prompts: pool, evalCount: 0 } }), render),
      /pool\.jsonl: expected at least one prompt row with a solution, got 1 reference-free rows/,
    );
  });

  it("says whether a run's data holds anything SFT can learn: a reference answer, a correction or generated tasks", async () => {
    const dir = await mkdtemp(join(tmpdir(), "arc-pool-"));
    const free = join(dir, "free.jsonl");
    await writeFile(free, `${JSON.stringify({ question: "Book Nobu", env: "toolcall" })}\n`);
    const solved = join(dir, "solved.jsonl");
    await writeFile(
      solved,
      `${JSON.stringify({ question: "Book Nobu", env: "toolcall", solution: { tool: "book_table", args: {} } })}\n`,
    );
    const prefs = join(dir, "prefs.jsonl");
    await writeFile(
      prefs,
      `${JSON.stringify({ prompt: "Book Nobu", chosen: "fixed", rejected: "wrong" })}\n`,
    );
    const empty = join(dir, "empty.jsonl");
    await writeFile(empty, "\n");
    const has = (data: Record<string, unknown>) =>
      hasSftData(parseRecipe({ data: { ...data, evalCount: 0 } }));
    assert.equal(await has({ prompts: free }), false);
    assert.equal(await has({ prompts: free, preferences: empty }), false);
    assert.equal(await has({ prompts: free, preferences: prefs }), true);
    assert.equal(await has({ prompts: solved }), true);
    assert.equal(await has({}), true);
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

  it("teaches SFT the chat examples of an OpenAI fine-tuning JSONL instead of the prompts' reference answers", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-chat-")), "chat.jsonl");
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }];
    await writeFile(
      path,
      [
        {
          messages: [
            { role: "system", content: "Judge it." },
            { role: "user", content: "2+2=5" },
            { role: "assistant", content: '{"failed":true}' },
          ],
        },
        {
          messages: [
            { role: "user", content: "find x" },
            { role: "assistant", content: "ok" },
          ],
          tools,
        },
      ]
        .map((row) => JSON.stringify(row))
        .join("\n"),
    );
    const data = await loadTrainingData(
      parseRecipe({ data: { examples: path, evalCount: 0 }, trainer: { algorithm: "sft" } }),
      render,
    );
    assert.deepEqual(
      data.examples.map((e) => [e.messages.map((m) => m.content), e.reply, e.tools]),
      [
        [["Judge it.", "2+2=5"], '{"failed":true}', undefined],
        [["find x"], "ok", tools],
      ],
    );
    await assert.rejects(
      loadTrainingData(
        parseRecipe({ data: { examples: path, evalCount: 0 }, trainer: { algorithm: "dpo" } }),
        render,
      ),
      /data.examples: chat examples are learned by SFT only, and this recipe's algorithm is dpo/,
    );
  });

  it("names the line and field of a chat example that does not end in the assistant's reply", async () => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-chat-")), "chat.jsonl");
    const good = {
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
      ],
    };
    const recipe = parseRecipe({ data: { examples: path, evalCount: 0 }, trainer: { algorithm: "sft" } });
    for (const [bad, message] of [
      [
        {
          messages: [
            { role: "user", content: "a" },
            { role: "user", content: "b" },
          ],
        },
        ':2.messages[1].role: expected assistant, got "user"',
      ],
      [
        { messages: [{ role: "user", content: "a" }] },
        ":2.messages: expected a prompt and the assistant reply to learn",
      ],
      [
        { messages: [{ role: "user" }, { role: "assistant", content: "b" }] },
        ":2.messages[0]: expected a message with a string role and string content",
      ],
    ] as const) {
      await writeFile(path, `${JSON.stringify(good)}\n${JSON.stringify(bad)}\n`);
      await assert.rejects(loadTrainingData(recipe, render), (error: Error) => {
        assert.ok(error.message.startsWith(`${path}${message}`), error.message);
        return true;
      });
    }
    await writeFile(path, "\n");
    await assert.rejects(loadTrainingData(recipe, render), /expected at least one chat example, got none/);
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

describe("a row's recorded context", () => {
  const solution = { tool: "get_weather", args: { city: "Oslo" } };
  const tools = toOpenAiTools(toolcallFamily.tools);
  const context = {
    messages: [
      { role: "system", content: "You are Acme's travel assistant." },
      { role: "user", content: "Weather in Oslo?" },
    ],
    tools,
  };
  const pool = async (rows: object[]) => {
    const path = join(await mkdtemp(join(tmpdir(), "arc-pool-")), "pool.jsonl");
    await writeFile(path, rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
    return path;
  };
  const sftRecipe = (path: string) =>
    parseRecipe({ data: { prompts: path, evalCount: 0, guidedFraction: 0 }, trainer: { algorithm: "sft" } });
  /** The prompt tokens a training step gets for `example`, rendered by the model's own chat template. */
  const stepPrompt = (example: ChatExample, renderWith: RenderExample) =>
    sftBatch([example], renderWith, 0, 1, 1).promptTokens[0];

  it("is the prompt its task trains on: its messages and tools through the model's chat template", async () => {
    const path = await pool([
      { question: "Weather in Oslo?", solution, env: "toolcall", context },
      { question: "Weather in Oslo?", solution, env: "toolcall" },
    ]);
    const bpe = await engineFactory.renderExample("models/toolcall-bpe");
    const data = await loadTrainingData(sftRecipe(path), bpe);
    assert.deepEqual(data.prompts[0].context, context);
    assert.deepEqual(data.examples[0].tools, tools);
    const tokenizer = await loadChatTokenizer("models/toolcall-bpe");
    const [recorded, plain] = data.examples.map((e) => tokenizer.decode(stepPrompt(e, bpe)));
    assert.match(recorded, /You are Acme's travel assistant\./);
    assert.match(recorded, /# Tools[\s\S]*\nget_weather\(city/);
    assert.doesNotMatch(plain, /Acme/, "a row without context keeps the family's prompt");
    assert.match(plain, /# Tools[\s\S]*\nget_weather\(city/, "with the family's tools");
  });

  it("renders as the family's prompt does on the byte models, which never saw tools", async () => {
    const path = await pool([
      {
        question: "Weather in Oslo?",
        solution,
        env: "toolcall",
        context: { messages: [context.messages[1]], tools },
      },
      { question: "Weather in Oslo?", solution, env: "toolcall" },
    ]);
    const byte = await engineFactory.renderExample("models/toolcall-base");
    const data = await loadTrainingData(sftRecipe(path), byte);
    const [recorded, plain] = data.examples.map((e) => stepPrompt(e, byte));
    assert.deepEqual(recorded, plain);
  });

  it("joins a message's text parts, as the chat endpoints do", async () => {
    const parts = [
      { type: "text", text: "Weather " },
      { type: "text", text: "in Oslo?" },
    ];
    const path = await pool([
      { question: "q", solution, env: "toolcall", context: { messages: [{ role: "user", content: parts }] } },
    ]);
    const data = await loadTrainingData(sftRecipe(path), render);
    assert.deepEqual(data.examples[0].messages, [{ role: "user", content: "Weather in Oslo?" }]);
  });

  it("names the line and field of a malformed context, and of an image a text model cannot read", async () => {
    const image = { type: "image_url", image_url: { url: "arc-image:sha256:00" } };
    const withImage = await pool([
      {
        question: "q",
        solution,
        env: "toolcall",
        context: { messages: [{ role: "user", content: [image] }] },
      },
    ]);
    await assert.rejects(
      loadTrainingData(sftRecipe(withImage), render),
      /pool\.jsonl:1\.context\.messages\[0\]\.content\[0\]: expected a text part \(the engines train text-only models\), got "image_url"/,
    );
    const path = await pool([{ question: "q", solution, env: "toolcall", context: { messages: "hi" } }]);
    await assert.rejects(loadTrainingData(sftRecipe(path), render), (error: Error) => {
      assert.match(
        error.message,
        /pool\.jsonl:1\.context\.messages: expected a list of chat messages, got "hi"/,
      );
      return true;
    });
  });
});
