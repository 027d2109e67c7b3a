/**
 * Identity and same-type Cast on the wasm backend without a copy: the output shares the input's memory and
 * takes a reference on it, as the cpu backend does. The wasm backend's own kernels copy, and autograd clones
 * every tensor it saves for the backward pass (about 350 copies a training step at the demo size).
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

let installed = false;

/** Puts the copy-free Identity and Cast in place of the wasm backend's. */
export function installSharedDataKernels(): void {
  if (installed) return;
  const identity = tf.getKernel("Identity", "wasm");
  const cast = tf.getKernel("Cast", "wasm");
  if (!identity || !cast) return;
  replace("Identity", (args) => {
    const { x } = args.inputs as NamedTensorInfoMap as { x: TensorInfo };
    return x.dtype === "string" ? identity.kernelFunc(args) : shared(args.backend as BackendWasm, x);
  });
  replace("Cast", (args) => {
    const { x } = args.inputs as NamedTensorInfoMap as { x: TensorInfo };
    const { dtype } = args.attrs as NamedAttrMap & { dtype: string };
    return dtype === x.dtype && dtype !== "string"
      ? shared(args.backend as BackendWasm, x)
      : cast.kernelFunc(args);
  });
  installed = true;
}

function shared(backend: BackendWasm, x: TensorInfo): TensorInfo {
  backend.incRef(x.dataId);
  return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
}

function replace(kernelName: string, kernelFunc: KernelFunc): void {
  tf.unregisterKernel(kernelName, "wasm");
  tf.registerKernel({ kernelName, backendName: "wasm", kernelFunc } satisfies KernelConfig);
}
