/**
 * Contract tests of the routes RL trainers use on vLLM and SGLang, held to those servers' documented shapes
 * (quoted from vllm/entrypoints/openai/completion/protocol.py, vllm/entrypoints/serve/tokenize/protocol.py and
 * sglang/srt/entrypoints/http_server.py), through the official openai client where it has the route.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { generateToolcallTasks, toolcallFamily } from "@arc/core/families";
import OpenAI from "openai";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { renderChat } from "../tokenizer/chat-template.ts";
import { byteChatTokenizer } from "../tokenizer/chat-tokenizer.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));

/** Prompts of toolcall tasks, rendered with the chat template. */
const prompts = (count: number) =>
  generateToolcallTasks({ split: "eval", seed: 21, count }).map((t) => renderChat(toolcallFamily.prompt(t)));

describe("vLLM's and SGLang's rollout routes on arc engine serve", () => {
  let engine: EmbeddedInferenceEngine;
  let server: RunningEngineServer;
  let client: OpenAI;

  before(async () => {
    engine = await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: 16 });
    server = await startEngineServer(engine, {
      modelId: "toolcall-base",
      tokenizer: byteChatTokenizer,
      contextLength: 1024,
      allowWeightUpdates: true,
    });
    client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 0 });
  });
  after(() => server.close());

  it("answers /v1/completions for token-id prompts with token ids and log-probs, prompt by prompt", async () => {
    const [a, b] = prompts(2);
    // vLLM: `prompt: list[int] | list[list[int]] | str | list[str]`, `logprobs: int | None`,
    // `return_tokens_as_token_ids: bool | None`, `return_token_ids: bool | None`
    const body = {
      model: "toolcall-base",
      prompt: [a, b],
      n: 2,
      max_tokens: 12,
      temperature: 1,
      seed: 5,
      logprobs: 1,
      return_tokens_as_token_ids: true,
      return_token_ids: true,
    };
    const res = (await client.completions.create(body as OpenAI.CompletionCreateParamsNonStreaming)) as Omit<
      OpenAI.Completion,
      "choices"
    > & { choices: (OpenAI.CompletionChoice & { token_ids: number[]; stop_reason: null })[] };
    assert.equal(res.object, "text_completion");
    assert.match(res.id, /^cmpl-/);
    // vLLM: choices prompt by prompt, `index = prompt_idx * n + sample_idx`
    assert.deepEqual(
      res.choices.map((c) => c.index),
      [0, 1, 2, 3],
    );
    const inProcess = await engine.generate(
      [a, b].map((p) => ({ promptTokens: p, n: 2, maxTokens: 12, temperature: 1, seed: 5, topLogprobs: 1 })),
    );
    res.choices.forEach((choice, i) => {
      const want = inProcess[i];
      const logprobs = choice.logprobs!;
      // vLLM: `format_token_id_placeholder(token_id) -> f"token_id:{token_id}"`
      assert.deepEqual(
        logprobs.tokens,
        want.outputTokens.map((t) => `token_id:${t}`),
      );
      assert.deepEqual(choice.token_ids, want.outputTokens);
      assert.equal(choice.text, want.text);
      assert.equal(choice.finish_reason, want.finishReason);
      assert.equal(choice.stop_reason, null);
      logprobs.token_logprobs!.forEach((x, j) => {
        assert.ok(Math.abs(x - want.outputLogprobs[j]) < 1e-6);
      });
      // vLLM: up to `logprobs + 1` entries a token, the sampled one among them
      logprobs.top_logprobs!.forEach((top, j) => {
        assert.ok(Object.keys(top).length <= 2 && `token_id:${want.outputTokens[j]}` in top);
      });
      assert.equal(logprobs.text_offset![0], 0);
    });
    const completion = inProcess.reduce((n, r) => n + r.outputTokens.length, 0);
    assert.deepEqual(res.usage, {
      prompt_tokens: a.length + b.length,
      completion_tokens: completion,
      total_tokens: a.length + b.length + completion,
    });
  });

  it("takes text prompts and stop strings, and names what it refuses", async () => {
    const res = await client.completions.create({
      model: "toolcall-base",
      prompt: "<|user|>Weather in Paris?",
      max_tokens: 40,
      temperature: 0,
      stop: ['"args"'],
    });
    assert.equal(res.choices.length, 1);
    assert.equal(res.choices[0].logprobs, null);
    assert.ok(!res.choices[0].text.includes('"args"'));
    const refused = async (body: object, message: RegExp, status = 400) => {
      const r = await fetch(`${server.baseURL}/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "toolcall-base", prompt: [1, 2], ...body }),
      });
      assert.equal(r.status, status);
      assert.match((await r.json()).error.message, message);
    };
    await refused({ stream: true }, /^stream: /);
    await refused({ prompt: [[1, -2]] }, /^prompt\[0\]: expected/);
    await refused({ logprobs: 21 }, /^logprobs: expected a number in \[0, 20\]/);
    await refused({ model: "other" }, /model `other` does not exist/, 404);
    // OpenAI: 400 "Unrecognized request argument supplied: x" for a field it does not document
    await refused({ min_p: 0.1 }, /^Unrecognized request argument supplied: min_p$/);
    await refused({ suffix: "}" }, /^Unsupported parameter: 'suffix'/);
    await refused({ best_of: 3 }, /^Unsupported parameter: 'best_of'/);
    await refused({ logit_bias: { 999: 1 } }, /logitBias: expected token ids from 0 to 263, got "999"/);
  });

  it("applies logit_bias and the penalties to completions as to chat completions", async () => {
    const body = {
      model: "toolcall-base",
      prompt: "<|user|>Weather in Paris?",
      max_tokens: 8,
      temperature: 0,
    };
    const forced = await client.completions.create({
      ...body,
      logit_bias: { [`${"q".charCodeAt(0)}`]: 100 },
    });
    assert.equal(forced.choices[0].text, "qqqqqqqq");
    const long = { ...body, max_tokens: 40 };
    const plain = (await client.completions.create(long)).choices[0].text;
    for (const penalty of [{ frequency_penalty: 2 }, { presence_penalty: 2 }]) {
      const penalized = (await client.completions.create({ ...long, ...penalty })).choices[0].text;
      assert.notEqual(penalized, plain, JSON.stringify(penalty));
    }
  });

  it("serves /tokenize and /health as vLLM does", async () => {
    const root = server.baseURL.replace(/\/v1$/, "");
    // vLLM: `GET /health` -> `Response(status_code=200)`, an empty body
    const health = await fetch(`${root}/health`);
    assert.equal(health.status, 200);
    assert.equal(await health.text(), "");
    // vLLM: `{"count": int, "max_model_len": int, "tokens": list[int], "token_strs": list[str] | None}`
    const r = await fetch(`${root}/tokenize`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "toolcall-base", messages: [{ role: "user", content: "hi" }] }),
    });
    const tokens = renderChat([{ role: "user", content: "hi" }]);
    assert.deepEqual(await r.json(), { count: tokens.length, max_model_len: 1024, tokens, token_strs: null });
  });

  it("loads a checkpoint as a new weight version with SGLang's /update_weights_from_disk, only when allowed", async () => {
    const root = server.baseURL.replace(/\/v1$/, "");
    const update = (body: object, at = root) =>
      fetch(`${at}/update_weights_from_disk`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    // SGLang: `{"success": bool, "message": str, "num_paused_requests": int}`, 200 on success, 400 on failure
    const ok = await update({ model_path: MODEL, weight_version: "7" });
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), {
      success: true,
      message: "Succeeded to update model weights.",
      num_paused_requests: 0,
    });
    assert.equal(engine.getVersion(), 7);
    const missing = await update({ model_path: "/nonexistent/checkpoint" });
    assert.equal(missing.status, 400);
    const failed = await missing.json();
    assert.equal(failed.success, false);
    assert.match(failed.message, /\/nonexistent\/checkpoint/);
    const closed = await startEngineServer(engine, { modelId: "toolcall-base" });
    try {
      const refused = await update({ model_path: MODEL }, closed.baseURL.replace(/\/v1$/, ""));
      assert.equal(refused.status, 404);
    } finally {
      await closed.close();
    }
  });
});
