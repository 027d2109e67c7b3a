import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EngineChatModel } from "@arc/core";
import { EmbeddedInferenceEngine } from "../inference/embedded-inference-engine.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { byteTokenCounter } from "./byte-token-counter.ts";

const tiny = configForSize("tiny");
const messages = [{ role: "user" as const, content: "Book a table for 2 at Nobu." }];

describe("EngineChatModel", () => {
  it("returns the engine's greedy text with the engine's own token counts", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 3));
    const model = new EngineChatModel(engine, { model: "tiny-v0" });
    const reply = await model.complete(messages, { maxTokens: 12, temperature: 0 });
    const [direct] = await engine.generate([{ messages, maxTokens: 12, temperature: 0 }]);
    assert.equal(reply.text, direct.text);
    assert.equal(reply.promptTokens, direct.promptTokens.length);
    assert.equal(reply.completionTokens, direct.outputTokens.length);
    assert.ok(reply.completionTokens <= 12);
    assert.equal(model.model, "tiny-v0");
  });

  it("reproduces a run of sampled calls from the same seed, and varies between calls", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 3));
    const run = async () => {
      const model = new EngineChatModel(engine, { seed: 11 });
      const texts: string[] = [];
      for (let i = 0; i < 3; i++)
        texts.push((await model.complete(messages, { maxTokens: 16, temperature: 1 })).text);
      return texts;
    };
    const [a, b] = [await run(), await run()];
    assert.deepEqual(a, b);
    assert.ok(new Set(a).size > 1, `expected different samples, got ${JSON.stringify(a)}`);
  });

  it("rejects with the signal's reason when the caller aborts mid-generation", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 3));
    const controller = new AbortController();
    // The same engine, made to keep sampling past end tokens and to abort at the first token: the abort always lands mid-generation.
    const model = new EngineChatModel({
      getVersion: () => engine.getVersion(),
      setWeights: (version, weights) => engine.setWeights(version, weights),
      generate: (requests, options) =>
        engine.generate(
          requests.map((request) => ({ ...request, ignoreEos: true })),
          { ...options, onToken: () => controller.abort(new Error("caller went away")) },
        ),
    });
    await assert.rejects(
      model.complete(messages, { maxTokens: 400, temperature: 1, signal: controller.signal }),
      /caller went away/,
    );
  });
});

describe("byteTokenCounter", () => {
  it("counts UTF-8 bytes and truncates without splitting a character", () => {
    assert.equal(byteTokenCounter.count("São"), 4);
    assert.equal(byteTokenCounter.truncate("São Paulo", 2), "S");
    assert.equal(byteTokenCounter.truncate("São Paulo", 3), "Sã");
    assert.equal(byteTokenCounter.truncate("abc", 10), "abc");
  });
});
