import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { tf } from "../backend/tf-backend.ts";
import { initWeights } from "../model/llama.ts";
import { configForSize } from "../model/llama-config.ts";
import { EmbeddedTrainEngine } from "./embedded-train-engine.ts";
import { assertTrainStepFits, estimateTrainStepBytes, WASM_HEAP_LIMIT_BYTES } from "./step-memory.ts";

const small = configForSize("small");
const tiny = configForSize("tiny");
const MiB = 2 ** 20;
/** A batch of `n` rows, half prompt and half output tokens of `length` in all. */
const rows = (n: number, length: number) => ({
  promptTokens: Array.from({ length: n }, () => Array(length / 2).fill(65)),
  outputTokens: Array.from({ length: n }, () => Array(length / 2).fill(66)),
});

describe("training step memory", () => {
  it("estimates the heap high-water marks measured on the wasm backend within 10%", () => {
    // measured with a fresh `small` trainer: SFT steps of rows × length tokens, wasm heap size after each
    for (const [rows, length, measuredMiB] of [
      [16, 345, 2710],
      [24, 345, 4019],
    ]) {
      const estimate = estimateTrainStepBytes(small, rows, length) / MiB;
      assert.ok(
        Math.abs(estimate / measuredMiB - 1) < 0.1,
        `${rows}×${length}: ${estimate} vs ${measuredMiB}`,
      );
    }
  });

  it("refuses a batch that would abort the wasm heap, naming its shape and the rows that fit", () => {
    assert.doesNotThrow(() => assertTrainStepFits(small, 24, 345));
    assert.throws(
      () => assertTrainStepFits(small, 32, 345),
      (e: Error) =>
        e instanceof RangeError &&
        /32 rows × 345 tokens/.test(e.message) &&
        /4\.0 GiB/.test(e.message) &&
        /at most 24 rows/.test(e.message),
    );
  });

  it("the trainer takes a batch larger than the heap holds in micro-batches, in one update", async () => {
    const trainer = await EmbeddedTrainEngine.create(tiny, initWeights(tiny, 1), { learningRate: 1e-3 });
    assert.equal(tf.getBackend(), "wasm");
    const perRow = estimateTrainStepBytes(tiny, 1, 512);
    const tooMany = Math.ceil(WASM_HEAP_LIMIT_BYTES / perRow) + 1;
    const m = await trainer.step(rows(tooMany, 512), { kind: "sft" });
    assert.equal(m.step, 1);
    assert.equal(m.tokens, tooMany * 256);
    assert.ok(Number.isFinite(m.loss) && m.loss > 0);
  });

  it("refuses, before computing, a row too long for the heap on its own, and still trains afterwards", async () => {
    const base = configForSize("base");
    const trainer = await EmbeddedTrainEngine.create(base, initWeights(base, 1), { learningRate: 1e-3 });
    await assert.rejects(
      trainer.step(rows(1, 2048), { kind: "sft" }),
      (e: Error) => e instanceof RangeError && /1 rows × 2048 tokens/.test(e.message),
    );
    assert.equal(trainer.getStep(), 0, "no update was applied");
    const m = await trainer.step(rows(2, 16), { kind: "sft" });
    assert.equal(m.step, 1);
    assert.ok(Number.isFinite(m.loss));
  });
});
