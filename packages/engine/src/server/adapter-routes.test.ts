/**
 * LoRA adapters served on one base, as vLLM serves them: `/v1/load_lora_adapter` and `/v1/unload_lora_adapter`
 * (shapes quoted from vllm/entrypoints/serve/lora/api_router.py and openai/models/serving.py), `model: <adapter>`
 * on the completion routes, and a bounded number held in memory.
 */
import assert from "node:assert/strict";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import OpenAI from "openai";
import { readHfCheckpoint, writeHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { renderChat, renderChatExample } from "../tokenizer/chat-template.ts";
import { byteChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import { AdapterPool } from "./adapter-pool.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

/** Trains LoRA adapters on `base` to answer `reply` and saves them; returns the checkpoint (adapter in `adapter/`). */
async function trainedAdapter(base: string, seed: number, reply: string): Promise<string> {
  const trainer = await EmbeddedTrainEngine.fromCheckpoint(base, {
    learningRate: 0.05,
    seed,
    lora: { rank: 4, alpha: 8, targets: ["q_proj", "v_proj", "up_proj"] },
  });
  const rows = generateToolcallTasks({ split: "eval", seed: 2, count: 8 }).map((t) =>
    renderChatExample(toolcallFamily.prompt(t), reply),
  );
  for (let s = 0; s < 12; s++)
    await trainer.step(
      { promptTokens: rows.map((r) => r.promptTokens), outputTokens: rows.map((r) => r.outputTokens) },
      { kind: "sft" },
    );
  const dir = await mkdtemp(join(tmpdir(), "arc-adapter-"));
  await trainer.save(dir);
  return dir;
}

describe("LoRA adapters on arc engine serve, as vLLM serves them", () => {
  let base: string;
  let saved: string[];
  let pool: AdapterPool;
  let server: RunningEngineServer;
  const prompt = renderChat(
    toolcallFamily.prompt(generateToolcallTasks({ split: "eval", seed: 2, count: 1 })[0]),
  );

  const post = (path: string, body: object) =>
    fetch(`${server.baseURL}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  /** The greedy answer of `model` over /v1/completions, as token ids. */
  const greedy = async (model: string) => {
    const res = await post("/completions", {
      model,
      prompt,
      max_tokens: 24,
      temperature: 0,
      return_token_ids: true,
    });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()).choices[0].token_ids as number[];
  };

  before(async () => {
    base = await mkdtemp(join(tmpdir(), "arc-adapter-base-"));
    const config = configForSize("tiny");
    await writeHfCheckpoint(base, config, initWeights(config, 3));
    saved = [await trainedAdapter(base, 11, "yes, at once"), await trainedAdapter(base, 12, "no; never")];
    pool = new AdapterPool(
      async () => (await readHfCheckpoint(base)).tensors,
      async (tensors) => {
        const engine = await EmbeddedInferenceEngine.load(base);
        await engine.setWeights(0, { kind: "tensors", tensors });
        return engine;
      },
      1,
    );
    server = await startEngineServer(await EmbeddedInferenceEngine.load(base), {
      modelId: "base",
      tokenizer: byteChatTokenizer,
      adapters: pool,
    });
  });
  after(() => server.close());

  it("loads adapters by name, answers each with its own weights, and holds one in memory at a time", async () => {
    for (const [i, dir] of saved.entries()) {
      const res = await post("/load_lora_adapter", {
        lora_name: `tenant-${i}`,
        lora_path: join(dir, "adapter"),
      });
      assert.equal(res.status, 200);
      // vLLM: `Success: LoRA adapter '{lora_name}' added successfully.`, a plain-text body
      assert.equal(await res.text(), `Success: LoRA adapter 'tenant-${i}' added successfully.`);
    }
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 0 });
    const listed = await client.models.list();
    assert.deepEqual(
      listed.data.map((m) => [m.id, (m as unknown as { parent?: string }).parent]),
      [
        ["base", undefined],
        ["tenant-0", "base"],
        ["tenant-1", "base"],
      ],
    );
    const merged = await Promise.all(saved.map((dir) => EmbeddedInferenceEngine.load(dir)));
    const want = await Promise.all(
      merged.map(
        async (e) => (await e.generate([{ promptTokens: prompt, maxTokens: 24, temperature: 0 }]))[0],
      ),
    );
    assert.notDeepEqual(want[0].outputTokens, want[1].outputTokens, "the two adapters answer differently");
    for (const name of ["tenant-0", "tenant-1", "tenant-0"]) {
      assert.deepEqual(await greedy(name), want[Number(name.at(-1))].outputTokens, name);
    }
    assert.deepEqual(
      pool.stats(),
      { loaded: 1, loads: 3 },
      "each switch loads again: one adapter held at a time",
    );
    const chat = await client.chat.completions.create({
      model: "tenant-1",
      messages: toolcallFamily.prompt(generateToolcallTasks({ split: "eval", seed: 2, count: 1 })[0]),
      max_tokens: 24,
      temperature: 0,
    });
    assert.equal(chat.choices[0].message.content, want[1].text);
  });

  it("answers vLLM's errors, and forgets an unloaded adapter", async () => {
    const again = await post("/load_lora_adapter", {
      lora_name: "tenant-0",
      lora_path: join(saved[0], "adapter"),
    });
    assert.equal(again.status, 400);
    assert.match((await again.json()).error.message, /The lora adapter 'tenant-0' has already been loaded/);
    const missing = await post("/load_lora_adapter", { lora_name: "x", lora_path: "/nonexistent" });
    assert.equal(missing.status, 404);
    assert.match(
      (await missing.json()).error.message,
      /Loading lora x failed: No adapter found for \/nonexistent/,
    );
    const bare = await post("/load_lora_adapter", { lora_name: "x" });
    assert.equal(bare.status, 400);
    assert.match((await bare.json()).error.message, /Both 'lora_name' and 'lora_path' must be provided/);
    const unload = await post("/unload_lora_adapter", { lora_name: "tenant-0" });
    assert.equal(await unload.text(), "Success: LoRA adapter 'tenant-0' removed successfully.");
    const gone = await post("/completions", { model: "tenant-0", prompt, max_tokens: 2 });
    assert.equal(gone.status, 404);
    const twice = await post("/unload_lora_adapter", { lora_name: "tenant-0" });
    assert.equal(twice.status, 404);
    assert.match((await twice.json()).error.message, /The lora adapter 'tenant-0' cannot be found/);
  });
});
