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
