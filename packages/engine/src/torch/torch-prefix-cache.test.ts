/**
 * The torch engine's prefix cache across calls, through the real Python worker on a small shipped Llama
 * (models/toolcall-base): a later call that begins with an earlier call's prompt runs only the rest, with the same
 * tokens and log-probs as an engine without the cache; salts keep scopes apart, the bound holds, and new weights
 * drop what the old ones computed.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { GenRequest, GenResult } from "@arc/core";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { torchUnavailable } from "./__fixtures__/torch-available.ts";
import { TorchInferenceEngine } from "./torch-inference-engine.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
/** One block's keys and values on this model: 4 layers x (keys, values) x 4 heads x 16 positions x 32 x 4 bytes. */
const BLOCK_BYTES = 4 * 2 * 4 * 16 * 32 * 4;

/** A 300-token system prompt's bytes (token ids of the byte-level model), different per `seed`. */
function systemPrompt(seed: number): number[] {
  const text = `Agent ${seed}. You call tools to answer. Tools: get_weather(city), convert(value, from, to). `;
  return [...Buffer.from(text.repeat(5))].slice(0, 300);
}

/** A sampled request (seeded) asking for top log-probs, over `prefix` and a short suffix of its own. */
function request(prefix: number[], suffix: string, extra: Partial<GenRequest> = {}): GenRequest {
  return {
    promptTokens: [...prefix, ...Buffer.from(suffix)],
    maxTokens: 12,
    temperature: 1,
    seed: 7,
    topLogprobs: 2,
    ignoreEos: true,
    ...extra,
  };
}

/** Asserts two engines' results are the same tokens, with log-probs within float tolerance. */
function assertSame(ours: GenResult[], theirs: GenResult[]): void {
  assert.equal(ours.length, theirs.length);
  ours.forEach((r, i) => {
    assert.deepEqual(r.outputTokens, theirs[i].outputTokens);
    r.outputLogprobs.forEach((x, t) => {
      assert.ok(Math.abs(x - theirs[i].outputLogprobs[t]) < 1e-4, `row ${i} position ${t}`);
    });
  });
}

describe("the torch engine's prefix cache across calls", { skip: torchUnavailable() }, () => {
  let plain: TorchInferenceEngine;
  let cached: TorchInferenceEngine;
  before(async () => {
    [plain, cached] = await Promise.all([
      TorchInferenceEngine.load(MODEL, { device: "cpu", prefixCacheBytes: 0 }),
      TorchInferenceEngine.load(MODEL, { device: "cpu" }),
    ]);
  });
  after(async () => {
    await Promise.all([plain?.close(), cached?.close()]);
  });

  it("reuses an earlier call's prefix on the next call, answering as an engine without the cache", async () => {
    assert.equal(await plain.prefixCacheStats(), null);
    const prefix = systemPrompt(1);
    const calls = [
      [request(prefix, "What is the weather in Paris?")],
      [request(prefix, "Convert 3 miles to km.")],
      [request(prefix, "Hi", { n: 2 }), request(prefix, "Weather in Oslo?", { seed: 9 })],
    ];
    for (const [i, call] of calls.entries()) {
      assertSame(await cached.generate(call), await plain.generate(call));
      const stats = await cached.prefixCacheStats();
      // the first call fills the cache with its 18 whole blocks (288 tokens); each later call reuses them
      assert.equal(stats?.hits, i);
      assert.equal(stats?.reusedTokens, i * 288);
    }
  });

  it("shares nothing between requests sent with different cache salts", async () => {
    const prefix = systemPrompt(2);
    const before = (await cached.prefixCacheStats())!.hits;
    for (const [salt, hits] of [
      ["tenant-a", 0],
      ["tenant-b", 0],
      ["tenant-a", 1],
      ["tenant-b", 2],
    ] as const) {
      const call = [request(prefix, `Weather for ${salt}?`, { cacheSalt: salt })];
      assertSame(await cached.generate(call), await plain.generate(call));
      assert.equal((await cached.prefixCacheStats())!.hits - before, hits, salt);
    }
  });

  it("drops what the old weights computed when new weights arrive", async () => {
    const prefix = systemPrompt(3);
    const call = [request(prefix, "Convert 10 kg to lb.")];
    const old = await cached.generate(call);
    assert.ok((await cached.prefixCacheStats())!.blocks > 0);
    const tensors = (await readHfCheckpoint(MODEL)).tensors;
    for (const [name, t] of tensors)
      if (name.endsWith("k_proj.weight")) tensors.set(name, { ...t, data: t.data.map((x) => x * 1.5) });
    await Promise.all([
      cached.setWeights(1, { kind: "tensors", tensors }),
      plain.setWeights(1, { kind: "tensors", tensors }),
    ]);
    const emptied = (await cached.prefixCacheStats())!;
    assert.equal(emptied.blocks, 0);
    assert.equal(emptied.bytes, 0);
    const fresh = await cached.generate(call);
    assert.equal((await cached.prefixCacheStats())!.hits, emptied.hits, "no hit under new weights");
    assertSame(fresh, await plain.generate(call));
    assert.notDeepEqual(fresh[0].outputLogprobs, old[0].outputLogprobs);
  });
});

describe("the torch engine's prefix cache bound", { skip: torchUnavailable() }, () => {
  it("keeps at most prefixCacheBytes, dropping a prefix's last blocks first", async () => {
    const bounded = await TorchInferenceEngine.load(MODEL, {
      device: "cpu",
      prefixCacheBytes: 10 * BLOCK_BYTES,
    });
    try {
      const prefix = systemPrompt(4);
      await bounded.generate([request(prefix, "first")]);
      const full = (await bounded.prefixCacheStats())!;
      assert.equal(full.maxBytes, 10 * BLOCK_BYTES);
      assert.equal(full.bytes, 10 * BLOCK_BYTES);
      assert.equal(full.blocks, 10);
      assert.equal(full.evicted, 9); // 19 whole blocks of the prompt's first 304 tokens computed, 10 kept
      await bounded.generate([request(prefix, "second")]);
      const after = (await bounded.prefixCacheStats())!;
      // the first 10 blocks stayed, so the second call begins with them
      assert.equal(after.reusedTokens, 10 * 16);
      assert.ok(after.bytes <= 10 * BLOCK_BYTES);
    } finally {
      await bounded.close();
    }
  });
});
