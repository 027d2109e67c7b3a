/**
 * Keeps chosen rows (indices along axis 0) of a tensor, in the order given: what the KV cache does when
 * samples leave a running batch. tf.gather does the same, but the wasm backend's gather moves one element
 * at a time (~90 ms for an 8 MB cache tensor), so on wasm a kernel of our own copies each run of
 * consecutive rows with one memory copy (~1 ms). Other backends use tf.gather.
 */

import type { BackendWasm } from "@tensorflow/tfjs-backend-wasm";
import type { KernelConfig, NamedTensorInfoMap, TensorInfo } from "@tensorflow/tfjs-core";
import { tf } from "./tf-backend.ts";

const KERNEL = "ArcSelectRows";

/** Runs of consecutive indices: [first, count] pairs that together list `rows` in order. */
export function consecutiveRuns(rows: readonly number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const row of rows) {
    const last = runs.at(-1);
    if (last && last[0] + last[1] === row) last[1]++;
    else runs.push([row, 1]);
  }
  return runs;
}

const wasmSelectRows: KernelConfig = {
  kernelName: KERNEL,
  backendName: "wasm",
  kernelFunc: ({ inputs, attrs, backend }) => {
    const x = (inputs as NamedTensorInfoMap).x as TensorInfo;
    const rows = (attrs as { rows: number[] }).rows;
    const wasm = backend as BackendWasm;
    const rowSize = x.shape.slice(1).reduce((a, b) => a * b, 1);
    const out = wasm.makeOutput([rows.length, ...x.shape.slice(1)], x.dtype);
    // views are taken after the output is allocated: growing the wasm heap detaches older views
    const from = wasm.typedArrayFromHeap(x);
    const to = wasm.typedArrayFromHeap(out);
    let at = 0;
    for (const [first, count] of consecutiveRuns(rows)) {
      to.set(from.subarray(first * rowSize, (first + count) * rowSize), at * rowSize);
      at += count;
    }
    return out as TensorInfo;
  },
};
tf.registerKernel(wasmSelectRows);

/** `x` with only the rows (axis 0) listed in `rows`, in that order; each index must be in [0, x.shape[0]). */
export function selectRows<T extends tf.Tensor>(x: T, rows: readonly number[]): T {
  const bad = rows.find((r) => !Number.isInteger(r) || r < 0 || r >= x.shape[0]);
  if (bad !== undefined) throw new RangeError(`rows: expected indices in [0, ${x.shape[0]}), got ${bad}`);
  if (tf.getBackend() !== "wasm") return tf.tidy(() => tf.gather(x, tf.tensor1d([...rows], "int32"), 0)) as T;
  return tf.engine().runKernel(KERNEL, { x }, { rows: [...rows] }) as T;
}
