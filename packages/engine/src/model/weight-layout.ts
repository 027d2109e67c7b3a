import { tf } from "../backend/tf-backend.ts";
import type { NamedTensor } from "../checkpoint/safetensors.ts";

/**
 * HF stores a projection as [out, in] (`y = x W^T`). The wasm backend multiplies a transposed operand
 * about 10x slower than a plain one, so the engine keeps projections (and `lm_head`) as [in, out] and
 * converts at the checkpoint boundary. Norms, biases and the embedding keep their HF layout.
 */
export function isTransposedInEngine(name: string): boolean {
  return name.endsWith("_proj.weight") || name === "lm_head.weight";
}

/** An HF tensor as the engine holds it. */
export function toEngineTensor(name: string, t: NamedTensor): tf.Tensor {
  const tensor = tf.tensor(t.data, t.shape);
  if (!isTransposedInEngine(name)) return tensor;
  const transposed = tf.transpose(tensor);
  tensor.dispose();
  return transposed;
}

/** An engine tensor in HF layout, as float32 data (for checkpoints and weight exports). */
export function toHfTensor(name: string, t: tf.Tensor): NamedTensor {
  if (!isTransposedInEngine(name)) return { shape: [...t.shape], data: t.dataSync() as Float32Array };
  const back = tf.transpose(t);
  const out = { shape: [...back.shape], data: back.dataSync() as Float32Array };
  back.dispose();
  return out;
}
