import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { batchedMatMul } from "./batched-matmul.ts";
import { initBackend, tf } from "./tf-backend.ts";

/** Largest absolute difference between two tensors. */
const maxDiff = (a: tf.Tensor, b: tf.Tensor) => tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0]);

describe("batchedMatMul", () => {
  const cases: { name: string; a: number[]; b: number[]; transposeB?: boolean }[] = [
    { name: "3-D, per-entry products", a: [5, 12, 7], b: [5, 7, 9] },
    { name: "4-D (batch rows x heads)", a: [2, 3, 16, 8], b: [2, 3, 8, 11] },
    { name: "4-D against a transposed right operand", a: [2, 3, 16, 8], b: [2, 3, 11, 8], transposeB: true },
    { name: "one query row (the backend's own loop)", a: [4, 2, 1, 8], b: [4, 2, 20, 8], transposeB: true },
    { name: "2-D", a: [12, 7], b: [7, 5] },
  ];
  for (const c of cases) {
    it(`equals tf.matMul: ${c.name}`, async () => {
      await initBackend("wasm");
      const a = tf.randomNormal(c.a, 0, 1, "float32", 1);
      const b = tf.randomNormal(c.b, 0, 1, "float32", 2);
      const tensorsBefore = tf.memory().numTensors;
      const bytesBefore = tf.memory().numBytes;
      const ours = batchedMatMul(a, b, c.transposeB);
      const expected = tf.matMul(a, b, false, c.transposeB);
      assert.deepEqual(ours.shape, expected.shape);
      assert.ok(maxDiff(ours, expected) < 1e-4, `differs by ${maxDiff(ours, expected)}`);
      tf.dispose([ours, expected]);
      assert.equal(tf.memory().numTensors, tensorsBefore, "no tensor left behind");
      assert.equal(tf.memory().numBytes, bytesBefore, "no scratch memory left behind");
      tf.dispose([a, b]);
    });
  }

  it("gives each call its own right operand's product (the backend caches packed operands by tensor)", async () => {
    await initBackend("wasm");
    const a = tf.randomNormal([3, 10, 4], 0, 1, "float32", 3);
    for (const seed of [4, 5, 6]) {
      const b = tf.randomNormal([3, 4, 6], 0, 1, "float32", seed);
      const ours = batchedMatMul(a, b);
      const expected = tf.matMul(a, b);
      assert.ok(maxDiff(ours, expected) < 1e-4, `seed ${seed}`);
      tf.dispose([b, ours, expected]);
    }
    a.dispose();
  });

  it("names mismatched inner sizes", async () => {
    await initBackend("wasm");
    const a = tf.zeros([2, 9, 4]);
    const b = tf.zeros([2, 5, 3]);
    assert.throws(() => batchedMatMul(a, b), /inner sizes differ, \[2,9,4\] x \[2,5,3\]/);
    tf.dispose([a, b]);
  });
});
