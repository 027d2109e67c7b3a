/**
 * RMSNorm, SwiGLU and rotary embeddings as single kernels with single-kernel gradients, run by the native addon
 * on the tensors where they lie in the wasm heap: one pass each instead of 6-20 small tensorflow.js kernels
 * (forward and backward), whose per-call overhead costs more than their arithmetic at the zoo sizes. Each op
 * computes the same math as the composite in model/llama.ts, which is used where the addon is not.
 */
import type { BackendWasm } from "@tensorflow/tfjs-backend-wasm";
import type { KernelFunc, NamedAttrMap, NamedTensorInfoMap, TensorInfo } from "@tensorflow/tfjs-core";
import * as tf from "@tensorflow/tfjs-core";
import type { NativeAddon } from "./native-addon.ts";

type Views = Record<string, Float32Array>;

let installed = false;

/** Whether the fused ops below can run (the wasm backend with the native addon). */
export function fusedOpsInstalled(): boolean {
  return installed && tf.getBackend() === "wasm";
}

/**
 * Registers a wasm kernel: `outputs` gives the shapes of its new outputs, `body` gets the inputs' and outputs'
 * values as heap views (taken after every allocation, as growing the heap detaches older views).
 */
function register(
  name: string,
  outputs: (inputs: Record<string, TensorInfo>) => number[][],
  body: (
    inputs: Views,
    outputs: Float32Array[],
    inputShapes: Record<string, number[]>,
    attrs: NamedAttrMap,
  ) => void,
): void {
  const kernelFunc: KernelFunc = ({ inputs, attrs, backend }) => {
    const wasm = backend as BackendWasm;
    const named = inputs as NamedTensorInfoMap as Record<string, TensorInfo>;
    const made = outputs(named).map((shape) => wasm.makeOutput(shape, "float32"));
    const views: Views = {};
    const shapes: Record<string, number[]> = {};
    for (const [key, t] of Object.entries(named)) {
      views[key] = wasm.typedArrayFromHeap(t) as Float32Array;
      shapes[key] = t.shape;
    }
    body(
      views,
      made.map((t) => wasm.typedArrayFromHeap(t) as Float32Array),
      shapes,
      attrs ?? {},
    );
    return made.length === 1 ? made[0] : made;
  };
  tf.registerKernel({ kernelName: name, backendName: "wasm", kernelFunc });
}

/** RMSNorm, SwiGLU and rotary embeddings, with their gradients. */
function registerLayerKernels(addon: NativeAddon): void {
  register(
    "ArcRmsNorm",
    ({ x }) => [x.shape, x.shape.slice(0, -1)],
    ({ x, w }, [y, inv], shapes, { eps }) => addon.rmsNorm(x, w, y, inv, shapes.x.at(-1)!, eps as number),
  );
  register(
    "ArcRmsNormGrad",
    ({ x, w }) => [x.shape, w.shape],
    ({ dy, x, w, inv }, [dx, dw], shapes) => addon.rmsNormGrad(dy, x, w, inv, dx, dw, shapes.x.at(-1)!),
  );
  register(
    "ArcSwiGlu",
    ({ gate }) => [gate.shape],
    ({ gate, up }, [y]) => addon.swiGlu(gate, up, y),
  );
  register(
    "ArcSwiGluGrad",
    ({ gate }) => [gate.shape, gate.shape],
    ({ dy, gate, up }, [dGate, dUp]) => addon.swiGluGrad(dy, gate, up, dGate, dUp),
  );
  register(
    "ArcRope",
    ({ x }) => [x.shape],
    ({ x, cos, sin }, [y], shapes, { scale, inverse }) =>
      addon.rope(x, cos, sin, y, shapes.x[2], shapes.x[3], scale as number, inverse ? 1 : 0),
  );
}

/** Attention over a whole sequence (with its gradient) and over a layer's KV cache. */
function registerAttentionKernels(addon: NativeAddon): void {
  register(
    "ArcAttention",
    ({ q }) => {
      const [B, T, H] = q.shape;
      return [q.shape, [B, H, T, T]];
    },
    ({ q, k, v, mask }, [out, probs], shapes) => {
      const [B, T, H, D] = shapes.q;
      addon.attend(q, k, v, probs, mask, out, B, T, H, shapes.k[2], D);
    },
  );
  register(
    "ArcAttentionGrad",
    ({ q, k }) => [q.shape, k.shape, k.shape],
    ({ dy, q, k, v, probs, mask }, [dq, dk, dv], shapes) => {
      const [B, T, H, D] = shapes.q;
      addon.attendGrad(dy, q, k, v, probs, mask, dq, dk, dv, B, T, H, shapes.k[2], D);
    },
  );
  register(
    "ArcCachedAttention",
    ({ q }) => [q.shape],
    ({ q, k, v, mask }, [out], shapes, attrs) => {
      const cache = attrs as unknown as CacheLayer;
      const [B, T, H, D] = shapes.q;
      addon.attendCached(
        q,
        k,
        v,
        mask,
        cache.keys,
        cache.values,
        out,
        B,
        T,
        H,
        shapes.k[2],
        D,
        cache.past,
        cache.capacity,
      );
    },
  );
}

/** The embedding's row gather and its gradient, a scatter-add of rows. */
function registerRowKernels(): void {
  register(
    "ArcGatherRows",
    ({ table, indices }) => [[...indices.shape, ...table.shape.slice(1)]],
    ({ table, indices }, [out], shapes) => {
      const ids = indices as unknown as Int32Array;
      const rows = shapes.table[0];
      const width = table.length / rows;
      for (let i = 0; i < ids.length; i++) {
        const row = ids[i];
        if (row < 0 || row >= rows) throw new RangeError(`gather: index ${row} is outside [0, ${rows})`);
        out.set(table.subarray(row * width, (row + 1) * width), i * width);
      }
    },
  );
  register(
    "ArcScatterAddRows",
    ({ table }) => [table.shape],
    ({ dy, indices }, [out], shapes) => {
      const ids = indices as unknown as Int32Array;
      const width = out.length / shapes.table[0];
      out.fill(0);
      for (let i = 0; i < ids.length; i++) {
        const into = ids[i] * width;
        for (let j = 0; j < width; j++) out[into + j] += dy[i * width + j];
      }
    },
  );
}

/** Each next token's log-probability and the entropy of its distribution, with their gradients. */
function registerTokenKernels(addon: NativeAddon): void {
  const nextTokenShape = ({ logits }: Record<string, TensorInfo>) => [[logits.shape[0], logits.shape[1] - 1]];
  register("ArcTokenLogprobs", nextTokenShape, ({ logits }, [logp], shapes, { targets }) => {
    const [B, L, V] = shapes.logits;
    addon.tokenLogprobs(logits, targets as unknown as Float32Array, logp, B, L, V);
  });
  register(
    "ArcTokenLogprobsGrad",
    ({ logits }) => [logits.shape],
    ({ dy, logits }, [dlogits], shapes, { targets }) => {
      const [B, L, V] = shapes.logits;
      addon.tokenLogprobsGrad(dy, logits, targets as unknown as Float32Array, dlogits, B, L, V);
    },
  );
  register("ArcTokenEntropy", nextTokenShape, ({ logits }, [entropy], shapes) => {
    const [B, L, V] = shapes.logits;
    addon.tokenEntropy(logits, entropy, B, L, V);
  });
  register(
    "ArcTokenEntropyGrad",
    ({ logits }) => [logits.shape],
    ({ dy, logits }, [dlogits], shapes) => {
      const [B, L, V] = shapes.logits;
      addon.tokenEntropyGrad(dy, logits, dlogits, B, L, V);
    },
  );
}

/** Registers the fused kernels on the wasm backend, run by `addon`. */
export function installFusedKernels(addon: NativeAddon): void {
  if (installed) return;
  registerLayerKernels(addon);
  registerAttentionKernels(addon);
  registerRowKernels();
  registerTokenKernels(addon);
  installed = true;
}

const run = (name: string, inputs: Record<string, tf.Tensor>, attrs: NamedAttrMap = {}) =>
  tf.engine().runKernel(name, inputs as unknown as tf.NamedTensorMap, attrs) as tf.Tensor | tf.Tensor[];

/** x / rms(x) * weight over the last axis, differentiable in x and weight. */
export const fusedRmsNorm = (x: tf.Tensor, weight: tf.Tensor, eps: number): tf.Tensor =>
  tf.customGrad(((xIn: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
    const [y, inv] = run("ArcRmsNorm", { x: xIn, w }, { eps }) as tf.Tensor[];
    save([xIn, w, inv]);
    return {
      value: y,
      gradFunc: (dy: tf.Tensor, [xs, ws, invs]: tf.Tensor[]) =>
        run("ArcRmsNormGrad", { dy, x: xs, w: ws, inv: invs }) as tf.Tensor[],
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0])(x, weight) as tf.Tensor;

/** silu(gate) * up, differentiable in both. */
export const fusedSwiGlu = (gate: tf.Tensor, up: tf.Tensor): tf.Tensor =>
  tf.customGrad(((g: tf.Tensor, u: tf.Tensor, save: tf.GradSaveFunc) => {
    save([g, u]);
    return {
      value: run("ArcSwiGlu", { gate: g, up: u }) as tf.Tensor,
      gradFunc: (dy: tf.Tensor, [gs, us]: tf.Tensor[]) =>
        run("ArcSwiGluGrad", { dy, gate: gs, up: us }) as tf.Tensor[],
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0])(gate, up) as tf.Tensor;

/**
 * scale * (x cos + rotate_half(x) sin) for x [B, T, H, D] and cos/sin [B, T, 1, D], differentiable in x (cos and
 * sin are constants).
 */
export function fusedRope(x: tf.Tensor4D, cos: tf.Tensor, sin: tf.Tensor, scale: number): tf.Tensor4D {
  const rope = tf.customGrad(((xIn: tf.Tensor) => ({
    value: run("ArcRope", { x: xIn, cos, sin }, { scale, inverse: false }) as tf.Tensor,
    gradFunc: (dy: tf.Tensor) => run("ArcRope", { x: dy, cos, sin }, { scale, inverse: true }) as tf.Tensor,
  })) as unknown as Parameters<typeof tf.customGrad>[0]);
  return rope(x) as tf.Tensor4D;
}

/**
 * softmax(q k^T + mask) v over T positions, differentiable in q, k and v (the mask is a constant): q [B, T, H, D]
 * (scaled, rotated), k and v [B, T, K, D], mask [B, 1, T, T] or [1, 1, T, T]; returns [B, T, H, D]. Query head h reads kv head
 * h / (H / K). The attention probabilities are kept for the gradient.
 */
export function fusedAttention(
  q: tf.Tensor4D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
): tf.Tensor4D {
  const attend = tf.customGrad(((qIn: tf.Tensor, kIn: tf.Tensor, vIn: tf.Tensor, save: tf.GradSaveFunc) => {
    const [out, probs] = run("ArcAttention", { q: qIn, k: kIn, v: vIn, mask }) as tf.Tensor[];
    save([qIn, kIn, vIn, probs, mask]); // the mask too: the caller may dispose it before the backward pass
    return {
      value: out,
      gradFunc: (dy: tf.Tensor, [qs, ks, vs, ps, ms]: tf.Tensor[]) =>
        run("ArcAttentionGrad", { dy, q: qs, k: ks, v: vs, probs: ps, mask: ms }) as tf.Tensor[],
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return attend(q, k, v) as tf.Tensor4D;
}

/** Rows `indices` of `table` ([rows, ...] -> [...indices.shape, ...]), by one copy per row (not differentiable). */
export function gatherRows(table: tf.Tensor, indices: tf.Tensor): tf.Tensor {
  return run("ArcGatherRows", { table, indices }) as tf.Tensor;
}

/**
 * Embedding lookup: rows `indices` (int32) of `table` [V, d], differentiable in the table (the gradient adds each
 * row's upstream gradient into its token's row), where a one-hot product would cost [tokens, V] x [V, d].
 */
export function fusedEmbedding(table: tf.Tensor2D, indices: tf.Tensor): tf.Tensor {
  const embed = tf.customGrad(((tableIn: tf.Tensor, save: tf.GradSaveFunc) => {
    save([tableIn, indices]);
    return {
      value: gatherRows(tableIn, indices),
      gradFunc: (dy: tf.Tensor, [savedTable, savedIndices]: tf.Tensor[]) =>
        run("ArcScatterAddRows", { dy, indices: savedIndices, table: savedTable }),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return embed(table) as tf.Tensor;
}

/**
 * The log-prob of each next token: logp[b, t] = log softmax(logits[b, t])[targets[b, t]] for logits [B, L, V] and
 * token ids `targets` [B, L-1]; returns [B, L-1], differentiable in the logits.
 */
export function fusedTokenLogprobs(logits: tf.Tensor3D, targets: ArrayLike<number>): tf.Tensor2D {
  const ids = Float32Array.from(targets);
  const logprobs = tf.customGrad(((logitsIn: tf.Tensor, save: tf.GradSaveFunc) => {
    save([logitsIn]);
    return {
      value: run("ArcTokenLogprobs", { logits: logitsIn }, { targets: ids } as unknown as NamedAttrMap),
      gradFunc: (dy: tf.Tensor, [saved]: tf.Tensor[]) =>
        run("ArcTokenLogprobsGrad", { dy, logits: saved }, { targets: ids } as unknown as NamedAttrMap),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return logprobs(logits) as tf.Tensor2D;
}

/** The entropy of each next-token distribution, softmax(logits[b, t]) for t < L-1: [B, L-1], differentiable. */
export function fusedTokenEntropy(logits: tf.Tensor3D): tf.Tensor2D {
  const entropy = tf.customGrad(((logitsIn: tf.Tensor, save: tf.GradSaveFunc) => {
    save([logitsIn]);
    return {
      value: run("ArcTokenEntropy", { logits: logitsIn }),
      gradFunc: (dy: tf.Tensor, [saved]: tf.Tensor[]) => run("ArcTokenEntropyGrad", { dy, logits: saved }),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return entropy(logits) as tf.Tensor2D;
}

/** One layer of a KV cache: keys and values [B, K, capacity, D], of which the first `past` positions are filled. */
export interface CacheLayer {
  keys: Float32Array;
  values: Float32Array;
  past: number;
  capacity: number;
}

/**
 * Attention of T new positions over one layer of a KV cache (inference only, not differentiable): writes the new
 * keys and values ([B, T, K, D], keys rotated) into it after its `past` positions, for which it must have room,
 * and returns softmax(q k^T + mask) v as [B, T, H, D] for q [B, T, H, D] (scaled, rotated) and the additive mask
 * [B, 1, T, past + T].
 */
export function fusedCachedAttention(
  q: tf.Tensor4D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
  cache: CacheLayer,
): tf.Tensor4D {
  return run("ArcCachedAttention", { q, k, v, mask }, cache as unknown as NamedAttrMap) as tf.Tensor4D;
}
