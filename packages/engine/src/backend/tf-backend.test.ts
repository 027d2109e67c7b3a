import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initBackend, tf } from "./tf-backend.js";

describe("initBackend", () => {
  it("lets callers that start it at once all make tensors as soon as their call resolves", async () => {
    const sums = await Promise.all(
      [1, 2, 3].map(async (value) => {
        await initBackend("wasm");
        const tensor = tf.tensor([value, value]);
        const sum = (await tensor.sum().data())[0];
        tensor.dispose();
        return sum;
      }),
    );
    assert.deepEqual(sums, [2, 4, 6]);
    assert.equal(tf.getBackend(), "wasm");
  });
});
