/**
 * Prefix caching on the embedded engine (models/toolcall-base): a prompt that begins with what an earlier prompt
 * computed reuses its keys and values and answers exactly as without the cache; the cache stays within its bytes,
 * dropping the least recently used blocks; different prompts that arrive together compute the prefix they share once;
 * nothing is reused across cache salts or weight versions.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import type { GenRequest, GenResult } from "@arc/core";
import { readHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { renderChat } from "../tokenizer/chat-template.ts";
import { EmbeddedInferenceEngine, sharedBlockPrefix } from "./embedded-inference-engine.ts";

const MODEL = fileURLToPath(new URL("../../../../models/toolcall-base", import.meta.url));
const SYSTEM = "You answer with one tool call. ".repeat(12);

/** A prompt of the shared system text and its own question. */
function prompt(question: string): number[] {
  return renderChat([
    { role: "system", content: SYSTEM },
    { role: "user", content: question },
  ]);
}

/** How many tokens two prompts begin with alike. */
function common(a: number[], b: number[]): number {
  let n = 0;
  while (n < a.length && a[n] === b[n]) n++;
  return n;
}

/** Both engines' log-probs agree to 1e-4 and their tokens exactly. */
function assertSame(cached: GenResult[], plain: GenResult[]): void {
  assert.deepEqual(
    cached.map((r) => r.outputTokens),
    plain.map((r) => r.outputTokens),
  );
  for (const [i, r] of cached.entries()) {
    for (const [t, x] of r.outputLogprobs.entries()) {
      assert.ok(Math.abs(x - plain[i].outputLogprobs[t]) < 1e-4, `row ${i} token ${t}: ${x}`);
    }
  }
}

describe("prefix caching (embedded engine)", () => {
  let plain: EmbeddedInferenceEngine;
  before(async () => {
    plain = await EmbeddedInferenceEngine.load(MODEL, { prefixCacheBytes: 0 });
  });

  it("answers a prompt that begins with a cached prefix as without the cache, having skipped that prefix", async () => {
    const cached = await EmbeddedInferenceEngine.load(MODEL);
    const first: GenRequest = { promptTokens: prompt("Weather in Paris?"), maxTokens: 24, temperature: 0 };
    await cached.generate([first]);
    assert.equal(cached.prefixCacheStats?.hits, 0);
    const requests: GenRequest[] = [
      { promptTokens: prompt("Weather in Oslo, in celsius?"), maxTokens: 24, temperature: 0 },
      {
        promptTokens: prompt("Book a table for two at Nopa."),
        maxTokens: 24,
        temperature: 0.8,
        seed: 5,
        n: 2,
      },
    ];
    const warm = await cached.generate(requests);
    const stats = cached.prefixCacheStats!;
    assert.equal(stats.hits, 3, "each of the three samples began after the cached prefix");
    const reusable = requests.map((r) => 16 * Math.floor(common(first.promptTokens!, r.promptTokens!) / 16));
    assert.ok(reusable.every((n) => n > 300));
    assert.equal(stats.reusedTokens, reusable[0] + 2 * reusable[1]);
    assertSame(warm, await plain.generate(requests));
  });

  it("admits warm and cold prompts in one call, and n samples of a warm prompt, all as without the cache", async () => {
    const cached = await EmbeddedInferenceEngine.load(MODEL);
    await cached.generate([{ promptTokens: prompt("Hello"), maxTokens: 1, temperature: 0 }]);
    const requests: GenRequest[] = [
      { promptTokens: prompt("Convert 20 EUR to USD."), maxTokens: 20, temperature: 1, seed: 3, n: 3 },
      {
        promptTokens: renderChat([{ role: "user", content: "A cold prompt, no system text" }]),
        maxTokens: 20,
        temperature: 0,
      },
      { promptTokens: prompt("Weather in Rome?"), maxTokens: 12, temperature: 0, topLogprobs: 2 },
    ];
    const warm = await cached.generate(requests);
    assert.equal(cached.prefixCacheStats?.hits, 4);
    assertSame(warm, await plain.generate(requests));
  });

  it("computes the prefix that different prompts arriving together share once, as a rollout batch's", async () => {
    const cached = await EmbeddedInferenceEngine.load(MODEL);
    const questions = [
      "Weather in Lima?",
      "Book a table for four.",
      "Convert 3 miles to km.",
      "Time in Tokyo?",
    ];
    const requests: GenRequest[] = questions.map((q, i) => ({
      promptTokens: prompt(q),
      maxTokens: 12,
      temperature: 0.7,
      seed: i,
      n: 2,
    }));
    const warm = await cached.generate(requests);
    const shared = sharedBlockPrefix(
      requests.map((r) => r.promptTokens!),
      16,
    );
    assert.ok(shared > 300, `the system text is a shared prefix of ${shared} tokens`);
    const stats = cached.prefixCacheStats!;
    assert.equal(stats.hits, questions.length * 2, "every sample began after the prefix computed once");
    assert.equal(stats.reusedTokens, questions.length * 2 * shared);
    assertSame(warm, await plain.generate(requests));
  });

  it("takes as shared prefix only whole blocks that leave each prompt a token of its own", () => {
    assert.equal(
      sharedBlockPrefix(
        [
          [1, 2, 3, 4, 5],
          [1, 2, 3, 4, 6],
        ],
        2,
      ),
      4,
    );
    assert.equal(
      sharedBlockPrefix(
        [
          [1, 2, 3, 4],
          [1, 2, 3, 4, 5],
        ],
        2,
      ),
      2,
    );
    assert.equal(
      sharedBlockPrefix(
        [
          [1, 2, 3],
          [9, 2, 3],
        ],
        1,
      ),
      0,
    );
    assert.equal(sharedBlockPrefix([], 16), 0);
  });

  it("stays within its bytes, dropping the least recently used blocks first", async () => {
    const { config } = await readHfCheckpoint(MODEL);
    const blockBytes =
      config.num_hidden_layers *
      2 *
      config.num_key_value_heads *
      16 *
      (config.hidden_size / config.num_attention_heads) *
      4;
    const cached = await EmbeddedInferenceEngine.load(MODEL, { prefixCacheBytes: 10 * blockBytes });
    const a = prompt("First question, about the weather in Lima.");
    await cached.generate([{ promptTokens: a, maxTokens: 1, temperature: 0 }]);
    assert.ok(Math.floor(a.length / 16) > 10, "more blocks than fit");
    const stats = cached.prefixCacheStats!;
    assert.equal(stats.bytes, 10 * blockBytes);
    assert.equal(stats.evicted, Math.floor(a.length / 16) - 10);
    // the prompt's first blocks went first, so nothing of it is found again
    await cached.generate([{ promptTokens: a, maxTokens: 1, temperature: 0 }]);
    assert.equal(cached.prefixCacheStats?.hits, 0);
  });

  it("reuses nothing across cache salts, nor after new weights", async () => {
    const cached = await EmbeddedInferenceEngine.load(MODEL);
    const ask = (salt: string): GenRequest => ({
      promptTokens: prompt("Weather in Paris?"),
      maxTokens: 1,
      temperature: 0,
      cacheSalt: salt,
    });
    await cached.generate([ask("tenant-a")]);
    await cached.generate([ask("tenant-b")]);
    assert.equal(cached.prefixCacheStats?.hits, 0);
    await cached.generate([ask("tenant-a")]);
    assert.equal(cached.prefixCacheStats?.hits, 1);
    await cached.setWeights(1, { kind: "checkpoint", dir: MODEL });
    assert.equal(cached.prefixCacheStats?.blocks, 0);
    await cached.generate([ask("tenant-a")]);
    assert.equal(cached.prefixCacheStats?.hits, 1);
  });
});
