import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { TokenEvent } from "@arc/core";
import { tf } from "../backend/tf-backend.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { EmbeddedInferenceEngine } from "./embedded-inference-engine.ts";

const tiny = configForSize("tiny");
const messages = [{ role: "user", content: "hello" }];

/** Tiny weights with the matrices scaled up, so greedy decoding picks clear winners that float rounding cannot swap. */
function decisiveWeights(seed: number) {
  const weights = initWeights(tiny, seed);
  for (const t of weights.values())
    for (let i = 0; i < t.data.length; i++) t.data[i] *= t.data.length > 64 ? 20 : 1;
  return weights;
}

describe("EmbeddedInferenceEngine", () => {
  it("is deterministic under a seed and gives n different samples", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    const req = { messages, n: 3, seed: 42, maxTokens: 10, topP: 0.9, topK: 50 };
    const a = await engine.generate([req]);
    const b = await engine.generate([req, { messages, maxTokens: 5 }]);
    assert.equal(a.length, 3);
    assert.deepEqual(
      a.map((r) => r.outputTokens),
      b.slice(0, 3).map((r) => r.outputTokens),
    );
    assert.ok(new Set(a.map((r) => r.outputTokens.join())).size > 1);
    assert.ok(
      a.every(
        (r) => r.outputLogprobs.length === r.outputTokens.length && r.outputLogprobs.every((x) => x <= 0),
      ),
    );
  });

  it("stops before a stop string and streams text that never includes it", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    const [free] = await engine.generate([{ messages, seed: 3, maxTokens: 24, temperature: 1 }]);
    const stop = [...free.text].slice(2).find((c) => c >= " " && c <= "~");
    assert.ok(stop, `expected a printable character in ${JSON.stringify(free.text)}`);
    const events: TokenEvent[] = [];
    const [cut] = await engine.generate(
      [{ messages, seed: 3, maxTokens: 24, temperature: 1, stop: [stop] }],
      {
        onToken: (e) => events.push(e),
      },
    );
    assert.equal(cut.finishReason, "stop");
    assert.equal(cut.text, free.text.slice(0, free.text.indexOf(stop)));
    assert.equal(events.map((e) => e.textDelta).join(""), cut.text);
    assert.equal(events.at(-1)?.finishReason, "stop");
  });

  it("ends unfinished samples with finishReason abort when the signal fires", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    const controller = new AbortController();
    let seen = 0;
    const out = await engine.generate([{ messages, maxTokens: 200, temperature: 1, seed: 1 }], {
      signal: controller.signal,
      onToken: () => {
        if (++seen === 1) controller.abort();
      },
    });
    assert.equal(out[0].finishReason, "abort");
    assert.ok(out[0].outputTokens.length < 200);
  });

  it("tags tokens with the weight version that produced them when weights change mid-generation", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1), { version: 7 });
    const other = initWeights(tiny, 2);
    let swapped: Promise<void> | undefined;
    const out = await engine.generate([{ messages, maxTokens: 30, temperature: 1, seed: 5, stop: [] }], {
      onToken: (e) => {
        if (e.token >= 0 && !swapped) swapped = engine.setWeights(8, { kind: "tensors", tensors: other });
      },
    });
    await swapped;
    const versions = out[0].outputVersions;
    assert.equal(versions[0], 7);
    assert.equal(versions.at(-1), 8);
    assert.equal(engine.getVersion(), 8);
  });

  it("gives each request the same greedy tokens whether it runs alone or joins a running batch", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, decisiveWeights(21), { maxBatchSize: 3 });
    const prompts = [
      [256, 1],
      [256, 9, 8, 7, 6, 5, 4, 3],
      [256, 40, 41, 42],
      [256, 100, 101, 102, 103, 104],
      [256, 7],
    ];
    const req = (p: number[]) => ({ promptTokens: p, temperature: 0, maxTokens: 12, ignoreEos: true });
    const alone: number[][] = [];
    for (const p of prompts) alone.push((await engine.generate([req(p)]))[0].outputTokens);
    // staggered arrivals: later calls join (and, beyond 3 rows, queue behind) the running batch
    const together = await Promise.all(
      prompts.map(async (p, i) => {
        await new Promise((r) => setTimeout(r, i * 3));
        return (await engine.generate([req(p)]))[0].outputTokens;
      }),
    );
    assert.deepEqual(together, alone);
  });

  it("gives queued rows that take finished rows' places the tokens they get alone", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, decisiveWeights(22), { maxBatchSize: 2 });
    // rows end at different steps while others queue; short prompts fit into the running cache, long ones do not
    const requests = [
      { prompt: [256, 3, 4, 5, 6, 7, 8, 9], maxTokens: 2 },
      { prompt: [256, 1], maxTokens: 14 },
      { prompt: [256, 40], maxTokens: 4 },
      { prompt: [256, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64], maxTokens: 6 },
      { prompt: [256, 70, 71], maxTokens: 3 },
      { prompt: [256, 9], maxTokens: 9 },
    ].map(({ prompt, maxTokens }) => ({ promptTokens: prompt, temperature: 0, maxTokens, ignoreEos: true }));
    const alone: number[][] = [];
    for (const r of requests) alone.push((await engine.generate([r]))[0].outputTokens);
    const together = (await engine.generate(requests)).map((s) => s.outputTokens);
    assert.deepEqual(together, alone);
  });

  it("runs a prompt shared by several samples once, and each continues it as it would alone", async () => {
    const weights = initWeights(tiny, 21);
    for (const t of weights.values())
      for (let i = 0; i < t.data.length; i++) t.data[i] *= t.data.length > 64 ? 20 : 1;
    const engine = await EmbeddedInferenceEngine.create(tiny, weights);
    const shared = [256, 9, 8, 7, 6, 5];
    const other = [256, 40, 41];
    const req = (p: number[], n = 1) => ({
      promptTokens: p,
      n,
      temperature: 0,
      maxTokens: 10,
      ignoreEos: true,
    });
    const [alone] = await engine.generate([req(shared)]);
    const [otherAlone] = await engine.generate([req(other)]);
    // one request of 3 samples, a shorter prompt between, and a second request of the same prompt
    const out = await engine.generate([req(shared, 3), req(other), req(shared)]);
    assert.deepEqual(
      out.map((r) => r.outputTokens),
      [alone, alone, alone, otherAlone, alone].map((r) => r.outputTokens),
    );
    const sampled = await engine.generate([
      { promptTokens: shared, n: 4, seed: 3, maxTokens: 10, temperature: 1 },
    ]);
    assert.ok(new Set(sampled.map((r) => r.outputTokens.join())).size > 1, "shared samples still differ");
  });

  it("rejects a request without a prompt, naming the field", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1));
    await assert.rejects(
      engine.generate([{ maxTokens: 3 }]),
      /requests\[0\]: expected promptTokens or messages/,
    );
    await assert.rejects(engine.generate([{ messages, temperature: -1 }]), /requests\[0\]\.temperature/);
  });

  it("keeps the number of live tensors constant over generations, merges and weight swaps", async () => {
    const engine = await EmbeddedInferenceEngine.create(tiny, initWeights(tiny, 1), { maxBatchSize: 4 });
    const other = initWeights(tiny, 2);
    const round = async (v: number) => {
      await engine.setWeights(v, { kind: "tensors", tensors: other });
      const controller = new AbortController();
      await Promise.all([
        engine.generate([{ promptTokens: [256, 1], n: 3, maxTokens: 9 }]),
        engine.generate([{ promptTokens: [256, 1, 2, 3], maxTokens: 5 }]),
        engine.generate([{ promptTokens: [256, 4], maxTokens: 50, signal: controller.signal }], {
          onToken: () => controller.abort(),
        }),
      ]);
    };
    await round(1);
    const before = tf.memory().numTensors;
    for (let v = 2; v < 5; v++) await round(v);
    assert.equal(tf.memory().numTensors, before);
  });
});
