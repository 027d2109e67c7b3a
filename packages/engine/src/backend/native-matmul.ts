/**
 * Runs the wasm backend's matrix products (`BatchMatMul`, which tf.matMul and every product of the model use) on
 * the native addon, reading and writing the tensors where they lie in the wasm heap. Batched and transposed
 * operands are handled by the addon's packing, so no product needs a copy or an explicit transpose. Shapes it
 * does not take (int32, batch axes that broadcast other than one-to-many) go to the backend's own kernel.
 */
import type { BackendWasm } from "@tensorflow/tfjs-backend-wasm";
import type {
  KernelConfig,
  KernelFunc,
  NamedAttrMap,
  NamedTensorInfoMap,
  TensorInfo,
} from "@tensorflow/tfjs-core";
import * as tf from "@tensorflow/tfjs-core";
import { installFusedKernels } from "./fused-kernels.ts";
import { type NativeAddon, nativeAddon } from "./native-addon.ts";

let installed = false;

/** Width of the column slivers `packPanels` writes (the register tile's, NR in native/engine-kernels.c). */
const SLIVER = 16;
/** From this many rows of A (one register tile) a packed right operand is read; fewer rows read B in order as it is. */
const PACKED_MIN_ROWS = 6;

/** Packed copies of constant right operands (inference weights), by the tensor's data id. */
const packedOperands = new WeakMap<object, { packed: Float32Array; k: number; n: number }>();

/**
 * Keeps a copy of a constant [k, n] matrix in the layout the native product reads in order, and uses it whenever
 * the matrix is the right operand of a product of at least a few rows. A product whose right operand has dropped
 * out of cache (every weight, between decoding steps) then streams it instead of reading one cache line per row.
 * Does nothing where the native products are not installed.
 */
export function packRightOperand(matrix: tf.Tensor): void {
  const addon = nativeAddon();
  if (!installed || !addon || matrix.rank !== 2 || matrix.dtype !== "float32") return;
  const [k, n] = matrix.shape;
  const packed = new Float32Array(Math.ceil(n / SLIVER) * SLIVER * k);
  addon.packPanels(matrix.dataSync() as Float32Array, packed, k, n);
  packedOperands.set(matrix.dataId, { packed, k, n });
}

/** Whether the wasm backend's products run on the native addon. */
export function nativeMatMulInstalled(): boolean {
  return installed;
}

/**
 * Puts the native products in place of the wasm backend's `BatchMatMul` and registers the fused kernels; false
 * when the addon is unavailable.
 */
export function installNativeMatMul(): boolean {
  if (installed) return true;
  const addon = nativeAddon();
  const original = tf.getKernel("BatchMatMul", "wasm");
  if (!addon || !original) return false;
  tf.unregisterKernel("BatchMatMul", "wasm");
  tf.registerKernel(nativeBatchMatMul(addon, original.kernelFunc));
  installFusedKernels(addon);
  installed = true;
  return true;
}

function nativeBatchMatMul(addon: NativeAddon, fallback: KernelFunc): KernelConfig {
  return {
    kernelName: "BatchMatMul",
    backendName: "wasm",
    kernelFunc: (args) => {
      const { a, b } = args.inputs as NamedTensorInfoMap as { a: TensorInfo; b: TensorInfo };
      const { transposeA, transposeB } = args.attrs as NamedAttrMap & {
        transposeA: boolean;
        transposeB: boolean;
      };
      const plan = productPlan(a, b, transposeA, transposeB);
      if (!plan) return fallback(args);
      const wasm = args.backend as BackendWasm;
      const out = wasm.makeOutput(plan.outShape, "float32");
      const twin = packedOperands.get(b.dataId);
      const packedFits = twin && b.shape.length === 2 && twin.k === plan.k && twin.n === plan.n; // a reshape shares the data id
      if (twin && packedFits && !transposeA && !transposeB && plan.batch === 1 && plan.m >= PACKED_MIN_ROWS) {
        addon.matMulPacked(
          wasm.typedArrayFromHeap(a) as Float32Array,
          twin.packed,
          wasm.typedArrayFromHeap(out) as Float32Array,
          plan.m,
          plan.n,
          plan.k,
        );
        return out as TensorInfo;
      }
      // Views are taken after the allocation: growing the wasm heap detaches older views.
      addon.matMul(
        wasm.typedArrayFromHeap(a) as Float32Array,
        wasm.typedArrayFromHeap(b) as Float32Array,
        wasm.typedArrayFromHeap(out) as Float32Array,
        plan.batch,
        plan.m,
        plan.n,
        plan.k,
        transposeA ? 1 : 0,
        transposeB ? 1 : 0,
        plan.aStride,
        plan.bStride,
      );
      return out as TensorInfo;
    },
  };
}

interface ProductPlan {
  outShape: number[];
  batch: number;
  m: number;
  n: number;
  k: number;
  aStride: number;
  bStride: number;
}

/** Sizes of op(a) op(b) over the batch axes, or undefined for shapes the addon does not take. */
function productPlan(
  a: TensorInfo,
  b: TensorInfo,
  transposeA: boolean,
  transposeB: boolean,
): ProductPlan | undefined {
  if (a.dtype !== "float32" || b.dtype !== "float32" || a.shape.length < 2 || b.shape.length < 2)
    return undefined;
  const [aRows, aCols] = a.shape.slice(-2);
  const [bRows, bCols] = b.shape.slice(-2);
  const m = transposeA ? aCols : aRows;
  const k = transposeA ? aRows : aCols;
  const n = transposeB ? bRows : bCols;
  if ((transposeB ? bCols : bRows) !== k) return undefined; // the backend's kernel names the mismatch
  const aLead = a.shape.slice(0, -2);
  const bLead = b.shape.slice(0, -2);
  const aBatch = aLead.reduce((x, y) => x * y, 1);
  const bBatch = bLead.reduce((x, y) => x * y, 1);
  let lead: number[];
  if (aLead.join() === bLead.join()) lead = aLead;
  else if (bBatch === 1 && aLead.length >= bLead.length) lead = aLead;
  else if (aBatch === 1 && bLead.length >= aLead.length) lead = bLead;
  else return undefined;
  const batch = Math.max(aBatch, bBatch);
  return {
    outShape: [...lead, m, n],
    batch,
    m,
    n,
    k,
    aStride: aBatch === 1 ? 0 : m * k,
    bStride: bBatch === 1 ? 0 : k * n,
  };
}
