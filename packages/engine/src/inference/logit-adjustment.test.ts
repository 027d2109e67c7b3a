import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LogitAdjustment } from "./logit-adjustment.ts";

const V = 6;
const logits = Float32Array.from([0.5, 1, 2, -1, 3, 0, 9, 9]);

describe("logit adjustment (OpenAI's logit_bias, frequency_penalty, presence_penalty)", () => {
  it("adds the bias, and subtracts count × frequency plus presence once a token was sampled", () => {
    const adjustment = LogitAdjustment.of(
      { logitBias: { 1: 5, 4: -100 }, frequencyPenalty: 0.5, presencePenalty: 1.25 },
      V,
      "requests[0]",
    );
    assert.ok(adjustment);
    // the row at offset 1 is [1, 2, -1, 3, 0, 9]
    assert.deepEqual([...adjustment.apply(logits, 1, V)], [1, 2 + 5, -1, 3, 0 - 100, 9]);
    for (const token of [2, 2, 2, 0]) adjustment.sampled(token);
    // token 2 sampled 3 times, token 0 once
    const row = adjustment.apply(logits, 1, V);
    assert.ok(Math.abs(row[0] - (1 - 0.5 - 1.25)) < 1e-6, String(row[0]));
    assert.ok(Math.abs(row[2] - (-1 - 3 * 0.5 - 1.25)) < 1e-6, String(row[2]));
    assert.deepEqual([row[1], row[3], row[4], row[5]], [2 + 5, 3, 0 - 100, 9]);
    assert.equal(logits[3], -1, "the model's logits are left as they were");
  });

  it("counts each sample apart: a fork starts with nothing sampled", () => {
    const adjustment = LogitAdjustment.of({ presencePenalty: 2 }, V, "requests[0]");
    assert.ok(adjustment);
    adjustment.sampled(3);
    assert.equal(adjustment.apply(logits, 0, V)[3], -3);
    assert.equal(adjustment.fork().apply(logits, 0, V)[3], -1);
  });

  it("is absent when nothing is asked for, a zero bias and zero penalties included", () => {
    assert.equal(LogitAdjustment.of({}, V, "r"), undefined);
    assert.equal(LogitAdjustment.of({ logitBias: { 2: 0 }, frequencyPenalty: 0 }, V, "r"), undefined);
  });

  it("names the field and the bound of a value out of range", () => {
    const of = (request: Parameters<typeof LogitAdjustment.of>[0]) => () =>
      LogitAdjustment.of(request, V, "requests[1]");
    assert.throws(of({ logitBias: { 6: 1 } }), {
      name: "TypeError",
      message: 'requests[1].logitBias: expected token ids from 0 to 5, got "6"',
    });
    assert.throws(of({ logitBias: { "-1": 1 } }), /logitBias: expected token ids from 0 to 5, got "-1"/);
    assert.throws(
      of({ logitBias: { 2: 101 } }),
      /logitBias\[2\]: expected a number from -100 to 100, got 101/,
    );
    assert.throws(
      of({ frequencyPenalty: 2.5 }),
      /requests\[1\]\.frequencyPenalty: expected a number from -2 to 2/,
    );
    assert.throws(
      of({ presencePenalty: Number.NaN }),
      /presencePenalty: expected a number from -2 to 2, got NaN/,
    );
  });
});
