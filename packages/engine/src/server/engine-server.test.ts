import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  type GenerateOptions,
  type GenRequest,
  type GenResult,
  type InferenceEngine,
  toOpenAiTools,
} from "@arc/core";
import { TOOLCALL_TOOLS } from "@arc/core/families";
import { waitUntil } from "@arc/core/testing";
import OpenAI from "openai";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { renderChatExample } from "../tokenizer/chat-template.ts";
import { EmbeddedTrainEngine } from "../train/embedded-train-engine.ts";
import { type RunningEngineServer, startEngineServer } from "./start-engine-server.ts";

const tiny = configForSize("tiny");
const REPLY = "hello there, friend";

/** The real engine, with every finished generation recorded so tests can see aborts. */
class RecordingEngine implements InferenceEngine {
  readonly finished: GenResult[] = [];
  constructor(private readonly inner: EmbeddedInferenceEngine) {}
  getVersion() {
    return this.inner.getVersion();
  }
  setWeights(version: number, source: Parameters<InferenceEngine["setWeights"]>[1]) {
    return this.inner.setWeights(version, source);
  }
  async generate(requests: GenRequest[], options?: GenerateOptions) {
    const results = await this.inner.generate(requests, options);
    this.finished.push(...results);
    return results;
  }
}

describe("arc engine serve (OpenAI-compatible API)", () => {
  let server: RunningEngineServer;
  let engine: RecordingEngine;
  let client: OpenAI;

  before(async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 1), { learningRate: 3e-3 });
    const ex = renderChatExample([{ role: "user", content: "hi" }], REPLY);
    for (let i = 0; i < 80; i++)
      await trainer.step(
        { promptTokens: [ex.promptTokens], outputTokens: [ex.outputTokens] },
        { kind: "sft" },
      );
    engine = new RecordingEngine(
      await EmbeddedInferenceEngine.create(tiny, trainer.exportTensors(), { version: 3 }),
    );
    server = await startEngineServer(engine, { modelId: "arc-tiny" });
    client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 0 });
  });
  after(() => server.close());

  it("lists the served model", async () => {
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ["arc-tiny"],
    );
  });

  it("answers a non-streaming completion with text, usage and per-token logprobs", async () => {
    const res = await client.chat.completions.create({
      model: "arc-tiny",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
      max_completion_tokens: 40,
    });
    const choice = res.choices[0];
    assert.equal(choice.message.content, REPLY);
    assert.equal(choice.finish_reason, "stop");
    assert.equal(res.usage?.completion_tokens, REPLY.length + 1);
    assert.equal(choice.logprobs?.content?.length, REPLY.length + 1);
    assert.equal(choice.logprobs?.content?.[0].token, "h");
    assert.equal(choice.logprobs?.content?.[0].top_logprobs.length, 2);
    assert.equal(res.system_fingerprint, "arc-w3");
  });

  it("returns n seeded samples, the same for the same seed, and honours stop and max_tokens", async () => {
    const ask = (seed: number) =>
      client.chat.completions.create({
        model: "arc-tiny",
        messages: [{ role: "user", content: "hey" }],
        n: 3,
        seed,
        max_tokens: 8,
      });
    const [a, b] = [await ask(7), await ask(7)];
    assert.equal(a.choices.length, 3);
    assert.deepEqual(
      a.choices.map((c) => c.message.content),
      b.choices.map((c) => c.message.content),
    );
    assert.ok(a.choices.every((c) => c.finish_reason === "length" || c.finish_reason === "stop"));
    const stopped = await client.chat.completions.create({
      model: "arc-tiny",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0,
      stop: [","],
    });
    assert.equal(stopped.choices[0].message.content, "hello there");
    assert.equal(stopped.choices[0].finish_reason, "stop");
  });

  it("streams SSE chunks whose deltas add up to the full reply, ending with the finish reason", async () => {
    const stream = await client.chat.completions.create({
      model: "arc-tiny",
      messages: [{ role: "user", content: "hi" }],
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null = null;
    let chunks = 0;
    let usage: number | undefined;
    for await (const chunk of stream) {
      chunks++;
      if (chunk.usage) usage = chunk.usage.completion_tokens;
      for (const choice of chunk.choices) {
        text += choice.delta.content ?? "";
        finish = choice.finish_reason ?? finish;
      }
    }
    assert.equal(text, REPLY);
    assert.equal(finish, "stop");
    assert.ok(chunks > 5, `expected a chunk per token, got ${chunks}`);
    assert.equal(usage, REPLY.length + 1);
  });

  it("ends with data: [DONE] on the wire", async () => {
    const res = await fetch(`${server.baseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "arc-tiny",
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        max_tokens: 3,
      }),
    });
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    const body = await res.text();
    assert.ok(body.trimEnd().endsWith("data: [DONE]"));
    assert.ok(
      body
        .split("\n\n")
        .filter(Boolean)
        .every((line) => line.startsWith("data: ")),
    );
  });

  it("answers bad requests with OpenAI's error shape naming the parameter", async () => {
    await assert.rejects(
      client.chat.completions.create({
        model: "arc-tiny",
        messages: [{ role: "user", content: "hi" }],
        temperature: 5,
      }),
      (e: unknown) =>
        e instanceof OpenAI.BadRequestError &&
        /temperature: expected a number from 0 to 2, got 5/.test(e.message),
    );
    await assert.rejects(
      client.chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "hi" }] }),
      (e: unknown) => e instanceof OpenAI.NotFoundError && e.code === "model_not_found",
    );
    const raw = await fetch(`${server.baseURL}/chat/completions`, { method: "POST", body: "{nope" });
    const body = await raw.json();
    assert.equal(raw.status, 400);
    assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
  });

  it("queues concurrent requests and answers all of them", async () => {
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        client.chat.completions.create({
          model: "arc-tiny",
          messages: [{ role: "user", content: "hi" }],
          temperature: 0,
        }),
      ),
    );
    assert.ok(replies.every((r) => r.choices[0].message.content === REPLY));
  });

  it("aborts the generation of a client that disconnects", async () => {
    // an untrained model rarely samples an end token, so the generation is still running when the client leaves
    const random = new RecordingEngine(await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 9)));
    const other = await startEngineServer(random, { modelId: "arc-random" });
    try {
      const controller = new AbortController();
      const stream = await new OpenAI({
        baseURL: other.baseURL,
        apiKey: "unused",
        maxRetries: 0,
      }).chat.completions.create(
        {
          model: "arc-random",
          messages: [{ role: "user", content: "zzz" }],
          stream: true,
          max_tokens: 2000,
          seed: 1,
        },
        { signal: controller.signal },
      );
      let seen = 0;
      try {
        for await (const _ of stream) if (++seen === 3) controller.abort();
      } catch (error) {
        assert.equal((error as Error).name, "APIUserAbortError");
      }
      await waitUntil(() => random.finished.length > 0, "the aborted request to finish", {
        timeoutMs: 20_000,
      });
      assert.equal(random.finished[0]?.finishReason, "abort");
      assert.ok(random.finished[0].outputTokens.length < 2000);
    } finally {
      await other.close();
    }
  });
});

describe("the engine server on a checkpoint with a BPE tokenizer and its own chat template", () => {
  it("answers chat messages through the official client, streamed and not, with the model's own tokens", async () => {
    const dir = new URL("../../../../models/toolcall-bpe", import.meta.url).pathname;
    const engine = await EmbeddedInferenceEngine.load(dir);
    const server = await startEngineServer(engine, { modelId: "toolcall-bpe" });
    try {
      const client = new OpenAI({ baseURL: server.baseURL, apiKey: "unused", maxRetries: 0 });
      const messages = [
        { role: "user" as const, content: "Book a table for 4 at Sakura House on 2026-03-05." },
      ];
      // the family's tools, as the model was trained; `none` leaves its call as the text it wrote
      const tools = toOpenAiTools(TOOLCALL_TOOLS) as unknown as OpenAI.ChatCompletionTool[];
      const offered = { tools, tool_choice: "none" as const };
      const reply = await client.chat.completions.create({
        model: "toolcall-bpe",
        messages,
        temperature: 0,
        ...offered,
      });
      const text = reply.choices[0].message.content ?? "";
      assert.equal(reply.choices[0].finish_reason, "stop");
      assert.match(text, /^\{"tool":"book_table","args":\{.*"Sakura House".*\}\}$/);
      assert.ok(reply.usage!.completion_tokens < text.length / 2, "BPE tokens, several bytes each");
      const stream = await client.chat.completions.create({
        model: "toolcall-bpe",
        messages,
        temperature: 0,
        stream: true,
        ...offered,
      });
      let streamed = "";
      for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? "";
      assert.equal(streamed, text);
    } finally {
      await server.close();
    }
  });
});
