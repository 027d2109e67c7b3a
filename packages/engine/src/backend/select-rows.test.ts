import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { consecutiveRuns, selectRows } from "./select-rows.ts";
import { initBackend, tf } from "./tf-backend.ts";

describe("selectRows", () => {
  it("groups indices into runs of consecutive rows", () => {
    assert.deepEqual(consecutiveRuns([0, 1, 2, 5, 6, 3, 9]), [
      [0, 3],
      [5, 2],
      [3, 1],
      [9, 1],
    ]);
    assert.deepEqual(consecutiveRuns([]), []);
  });

  for (const backend of ["wasm", "cpu"] as const) {
    it(`keeps the listed rows of a 4-D tensor in the given order, as tf.gather does (${backend})`, async () => {
      await initBackend(backend);
      try {
        const x = tf.tensor4d(
          Array.from({ length: 6 * 2 * 3 * 4 }, (_, i) => i),
          [6, 2, 3, 4],
        );
        for (const rows of [[0, 1, 2, 3, 4, 5], [1, 2, 4], [5, 0, 3], [3]]) {
          const picked = selectRows(x, rows);
          const expected = tf.gather(x, tf.tensor1d(rows, "int32"), 0);
          assert.deepEqual(picked.shape, [rows.length, 2, 3, 4]);
          assert.deepEqual(picked.arraySync(), expected.arraySync(), `rows ${rows}`);
          tf.dispose([picked, expected]);
        }
        const before = tf.memory().numTensors;
        selectRows(x, [2, 3]).dispose();
        assert.equal(tf.memory().numTensors, before, "no tensor left behind");
        x.dispose();
      } finally {
        await initBackend("wasm");
      }
    });
  }

  it("names an index outside the tensor", async () => {
    await initBackend("wasm");
    const x = tf.zeros([3, 2]);
    assert.throws(() => selectRows(x, [0, 3]), /rows: expected indices in \[0, 3\), got 3/);
    assert.throws(() => selectRows(x, [1.5]), /got 1.5/);
    x.dispose();
  });
});
