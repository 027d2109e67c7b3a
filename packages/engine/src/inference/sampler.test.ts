import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mulberry32 } from "../model/llama.ts";
import { sampleToken } from "./sampler.ts";

const logits = Float32Array.from([1, 3, 2, 0.5, -1]);
const V = logits.length;
const logZ = Math.log(logits.reduce((s, x) => s + Math.exp(x), 0));
const draws = (params: { temperature: number; topP: number; topK: number }, n = 20000) => {
  const rand = mulberry32(1);
  const counts = new Array(V).fill(0);
  for (let i = 0; i < n; i++) counts[sampleToken(logits, 0, V, params, rand()).token]++;
  return counts.map((c) => c / n);
};

describe("sampleToken", () => {
  it("picks the most likely token at temperature 0 and reports its raw log-probability", () => {
    const picked = sampleToken(logits, 0, V, { temperature: 0, topP: 1, topK: 0 }, 0.99, 2);
    assert.equal(picked.token, 1);
    assert.ok(Math.abs(picked.logprob - (3 - logZ)) < 1e-6);
    assert.deepEqual(
      picked.top?.map((t) => t.token),
      [1, 2],
    );
  });

  it("samples in proportion to softmax(logits / temperature)", () => {
    const freq = draws({ temperature: 1, topP: 1, topK: 0 });
    for (const [i, x] of logits.entries())
      assert.ok(Math.abs(freq[i] - Math.exp(x - logZ)) < 0.01, `token ${i}`);
    const hot = draws({ temperature: 2, topP: 1, topK: 0 });
    assert.ok(hot[4] > freq[4] * 1.5, "a higher temperature flattens the distribution");
  });

  it("keeps only the k most likely tokens, renormalised", () => {
    const freq = draws({ temperature: 1, topP: 1, topK: 2 });
    assert.equal(freq[0] + freq[3] + freq[4], 0);
    const p1 = Math.exp(3) / (Math.exp(3) + Math.exp(2));
    assert.ok(Math.abs(freq[1] - p1) < 0.01);
  });

  it("keeps the smallest set whose mass reaches top_p, after top_k", () => {
    const p = logits.map((x) => Math.exp(x - logZ)); // [0.09, 0.66, 0.24, 0.05, 0.01]
    const freq = draws({ temperature: 1, topP: 0.8, topK: 0 });
    assert.ok(freq[0] === 0 && freq[3] === 0 && freq[4] === 0);
    assert.ok(Math.abs(freq[1] - p[1] / (p[1] + p[2])) < 0.01);
    assert.deepEqual(draws({ temperature: 1, topP: 0.5, topK: 0 }, 100), [0, 1, 0, 0, 0]);
    // top-k = 3 keeps {1, 2, 0}; top-p 0.95 of that set still needs all three
    const both = draws({ temperature: 1, topP: 0.95, topK: 3 });
    assert.ok(both[0] > 0 && both[3] === 0 && both[4] === 0);
  });
});
