/**
 * Batched matrix products (attention's q k^T and p v, over batch rows and heads). The wasm backend runs a
 * product on XNNPACK only when it is a single, untransposed 2-D one; batched products fall back to a plain
 * loop about 4x slower per multiply-add. On wasm this kernel of ours copies each batch entry's two matrices into
 * scratch tensors, runs the backend's own 2-D product on them (XNNPACK), and copies the result into place. The
 * copies are small next to the products once each matrix has a few rows; with fewer (decoding: one query row)
 * the backend's batched loop is faster and is used. Other backends use tf.matMul.
 */
import type { BackendWasm } from "@tensorflow/tfjs-backend-wasm";
import type { KernelConfig, NamedTensorInfoMap, TensorInfo } from "@tensorflow/tfjs-core";
import { nativeMatMulInstalled } from "./native-matmul.ts";
import { tf } from "./tf-backend.ts";

const KERNEL = "ArcBatchedMatMul";
/** Below this many rows per product, per-entry kernel calls cost more than the backend's batched loop saves. */
const MIN_ROWS_PER_ENTRY = 8;

const wasmBatchedMatMul: KernelConfig = {
  kernelName: KERNEL,
  backendName: "wasm",
  kernelFunc: ({ inputs, backend }) => {
    const a = (inputs as NamedTensorInfoMap).a as TensorInfo;
    const b = (inputs as NamedTensorInfoMap).b as TensorInfo;
    const wasm = backend as BackendWasm;
    const product = tf.getKernel("BatchMatMul", "wasm");
    if (!product) throw new Error("the wasm backend has no BatchMatMul kernel");
    const [m, k] = a.shape.slice(-2);
    const n = b.shape.at(-1) as number;
    const batch = a.shape.slice(0, -2).reduce((x, y) => x * y, 1);
    const out = wasm.makeOutput([...a.shape.slice(0, -2), m, n], "float32");
    const left = wasm.makeOutput([m, k], "float32");
    try {
      for (let i = 0; i < batch; i++) {
        // The backend keeps XNNPACK's packed copy of a right operand by tensor id until that tensor is disposed,
        // so every entry's right operand is a new tensor. Views are taken after every allocation: growing the
        // wasm heap detaches older views.
        const right = wasm.makeOutput([k, n], "float32");
        wasm.typedArrayFromHeap(left).set(wasm.typedArrayFromHeap(a).subarray(i * m * k, (i + 1) * m * k));
        wasm.typedArrayFromHeap(right).set(wasm.typedArrayFromHeap(b).subarray(i * k * n, (i + 1) * k * n));
        const entry = product.kernelFunc({
          inputs: { a: left, b: right },
          backend,
          attrs: { transposeA: false, transposeB: false },
        }) as TensorInfo;
        wasm.typedArrayFromHeap(out).set(wasm.typedArrayFromHeap(entry), i * m * n);
        wasm.disposeData(entry.dataId);
        wasm.disposeData(right.dataId);
      }
    } finally {
      wasm.disposeData(left.dataId);
    }
    return out as TensorInfo;
  },
};
tf.registerKernel(wasmBatchedMatMul);

/**
 * a @ b (a @ b^T with `transposeB`), batched over matching leading axes: [..., m, k] x [..., k, n] -> [..., m, n].
 * With the native products installed, tf.matMul (they take batches and transposes as they are);
 * else per batch entry on XNNPACK where that is faster (wasm, float32, at least a few rows), else tf.matMul.
 */
export function batchedMatMul(a: tf.Tensor, b: tf.Tensor, transposeB = false): tf.Tensor {
  const inner = transposeB ? b.shape.at(-1) : b.shape.at(-2);
  if (a.shape.at(-1) !== inner) {
    throw new RangeError(
      `batchedMatMul: inner sizes differ, [${a.shape}] x [${b.shape}]${transposeB ? "^T" : ""}`,
    );
  }
  if (nativeMatMulInstalled()) return tf.matMul(a, b, false, transposeB);
  const rows = a.shape.at(-2) as number;
  const lead = a.shape.slice(0, -2);
  const sameBatch = lead.length > 0 && lead.join() === b.shape.slice(0, -2).join();
  if (tf.getBackend() !== "wasm" || !sameBatch || rows < MIN_ROWS_PER_ENTRY || a.dtype !== "float32") {
    return tf.matMul(a, b, false, transposeB);
  }
  return tf.tidy(() => {
    const right = transposeB ? transposeLast(b) : b;
    return tf.engine().runKernel(KERNEL, { a, b: right }, {}) as tf.Tensor;
  });
}

/** Last-two-axes transpose: [..., m, n] -> [..., n, m]. */
export function transposeLast(x: tf.Tensor): tf.Tensor {
  const perm = x.shape.map((_, i) => i);
  perm[perm.length - 2] = perm.length - 1;
  perm[perm.length - 1] = perm.length - 2;
  return tf.transpose(x, perm);
}
