/**
 * A decoder-only Llama transformer, bottom-up in one file: RMSNorm, rotary position embeddings (RoPE,
 * HF's rotate-half convention), SwiGLU MLP, causal multi-head attention with optional grouped KV heads,
 * tied or untied output embeddings, and an optional KV cache for incremental decoding.
 *
 * Weights are kept by their HF names; projections are held as [in, out] (HF's transpose, see
 * weight-layout.ts), so `y = x W`. In training, matrix products go through `matmul`, whose gradient uses
 * only untransposed products (the wasm backend's transposed 2-D product is ~4-10x slower). Batched products
 * (attention, over batch rows and heads) run per batch entry on XNNPACK when each has a few rows (training,
 * backend/batched-matmul.ts). Inference attends over a KV cache (kv-cache.ts) that one native kernel per layer
 * writes in place and reads, where the addon is. For inference the engine adds a fused `qkv_proj` matrix (fewer,
 * larger products; see fuseForInference): per-op overhead, not arithmetic, bounds decoding at these sizes.
 * Shapes: B batch, T new positions, S attended positions (past + new), H query heads, K kv heads,
 * D head width, d model width, F MLP width, V vocabulary.
 */
import { batchedMatMul, transposeLast } from "../backend/batched-matmul.ts";
import {
  fusedAttention,
  fusedCachedAttention,
  fusedEmbedding,
  fusedOpsInstalled,
  fusedRmsNorm,
  fusedRope,
  fusedSwiGlu,
  gatherRows,
} from "../backend/fused-kernels.ts";
import { nativeMatMulInstalled, packRightOperand } from "../backend/native-matmul.ts";
import { tf } from "../backend/tf-backend.ts";
import type { KvCache } from "./kv-cache.ts";
import { headDim, type LlamaConfig, parameterShapes } from "./llama-config.ts";
import { ropeFrequencies } from "./rope-scaling.ts";

/** Model weights by HF tensor name, projections as [in, out] (tensors or trainable variables). */
export type Weights = Record<string, tf.Tensor>;

/** RoPE tables for every position, and the signed permutation that computes rotate_half(x) as x @ rot. */
export interface RopeTables {
  cos: tf.Tensor2D; // [maxPos, D]
  sin: tf.Tensor2D; // [maxPos, D]
  rot: tf.Tensor2D; // [D, D]
}

/** One forward call: tokens at given positions, attending to the cache (if any) under an additive mask. */
export interface ForwardInputs {
  tokens: tf.Tensor2D; // [B, T] int32
  positions: tf.Tensor2D; // [B, T] int32, RoPE position of each token
  mask: tf.Tensor4D; // [B, 1, T, S] additive: 0 where attention is allowed, -1e9 where not
  /** Past positions (S = cache.length + T); the new keys and values are added to it (inference only). */
  cache?: KvCache;
  /**
   * `train`: differentiable everywhere (the embedding is a gather with a scatter-add gradient where the native
   * kernels are, else a one-hot product, as wasm lacks gather's gradient; custom matmul gradient). `infer`: gather
   * embedding and plain products, fewer ops per step.
   */
  mode: "train" | "infer";
  /** Compute logits only for the last position (decoding), not all T. */
  lastOnly?: boolean;
  /** alpha / rank of LoRA adapters present in the weights as `<name>.lora_A` [in, r] and `<name>.lora_B` [r, out]. */
  loraScale?: number;
}

/** Deterministic PRNG (mulberry32); the same seed gives the same weights on every machine. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fresh weights as HF initialises Llama: normal(0, 0.02) matrices, ones for norms, zeros for biases. */
export function initWeights(
  config: LlamaConfig,
  seed = 0,
): Map<string, { shape: number[]; data: Float32Array }> {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, shape] of parameterShapes(config)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith("norm.weight")) data.fill(1);
    else if (!name.endsWith(".bias")) for (let i = 0; i < data.length; i++) data[i] = 0.02 * normal();
    out.set(name, { shape, data });
  }
  return out;
}

/** Precomputes RoPE cos/sin for positions 0..max_position_embeddings-1 (theta^(-2i/D), halves duplicated as in HF). */
export function ropeTables(config: LlamaConfig): RopeTables {
  const D = headDim(config);
  const P = config.max_position_embeddings;
  const cos = new Float32Array(P * D);
  const sin = new Float32Array(P * D);
  const { inverse, attentionScaling } = ropeFrequencies(D, config.rope_theta, config.rope_scaling);
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < D / 2; i++) {
      const angle = Math.fround(p * inverse[i]);
      cos[p * D + i] = cos[p * D + i + D / 2] = Math.cos(angle) * attentionScaling;
      sin[p * D + i] = sin[p * D + i + D / 2] = Math.sin(angle) * attentionScaling;
    }
  }
  // rotate_half([x1, x2]) = [-x2, x1]: column j < D/2 takes -x[j + D/2], column j >= D/2 takes x[j - D/2].
  const rot = new Float32Array(D * D);
  for (let j = 0; j < D / 2; j++) {
    rot[(j + D / 2) * D + j] = -1;
    rot[j * D + j + D / 2] = 1;
  }
  return { cos: tf.tensor2d(cos, [P, D]), sin: tf.tensor2d(sin, [P, D]), rot: tf.tensor2d(rot, [D, D]) };
}

/**
 * a @ b (batched over leading axes) with a gradient of plain products: with the native products installed they
 * take transposed operands as they are; else explicit transposes, as the wasm backend's transposed products are
 * ~4-10x slower than untransposed ones.
 */
export const matmul = tf.customGrad(((a: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: batchedMatMul(a, b),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
      nativeMatMulInstalled()
        ? [tf.matMul(dy, saved[1], false, true), tf.matMul(saved[0], dy, true, false)] // dA = dY B^T, dB = A^T dY
        : [batchedMatMul(dy, transposeLast(saved[1])), batchedMatMul(transposeLast(saved[0]), dy)],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

/** a @ b^T (batched over leading axes), differentiable, for attention scores q k^T. */
const matmulTransposed = tf.customGrad(((a: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a, b, false, true),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [
      tf.matMul(dy, saved[1]), // dA = dY B
      tf.matMul(dy, saved[0], true, false), // dB = dY^T A
    ],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

/** Attention scores q k^T: differentiable in training, without an explicit transpose where the products take one. */
function scoreProduct(train: boolean, q: tf.Tensor, k: tf.Tensor): tf.Tensor {
  if (!train) return batchedMatMul(q, k, true);
  return nativeMatMulInstalled() ? matmulTransposed(q, k) : matmul(q, transposeLast(k));
}

const unitWeights = new Map<number, tf.Tensor1D>();

/** A kept vector of ones of this width: the weight of a norm whose own weight is folded into the next product. */
function unitWeight(width: number): tf.Tensor1D {
  let ones = unitWeights.get(width);
  if (!ones) {
    ones = tf.keep(tf.ones([width]) as tf.Tensor1D);
    unitWeights.set(width, ones);
  }
  return ones;
}

/** x / rms(x) * weight; without a weight (folded into the next product for inference) just x / rms(x). */
function rmsNorm(x: tf.Tensor, weight: tf.Tensor | undefined, eps: number): tf.Tensor {
  if (fusedOpsInstalled()) return fusedRmsNorm(x, weight ?? unitWeight(x.shape.at(-1) as number), eps);
  const variance = tf.mean(tf.square(x), -1, true); // [..., 1]
  const normed = tf.mul(x, tf.rsqrt(tf.add(variance, eps))); // [..., d]
  return weight ? tf.mul(normed, weight) : normed;
}

type Product = (a: tf.Tensor, b: tf.Tensor) => tf.Tensor;

/** silu(gate) * up. */
function swiGlu(gate: tf.Tensor, up: tf.Tensor): tf.Tensor {
  return fusedOpsInstalled() ? fusedSwiGlu(gate, up) : tf.mul(tf.mul(gate, tf.sigmoid(gate)), up);
}

/** x @ W (+ b): an HF Linear layer with W held as [in, out]. */
function linear(mm: Product, x: tf.Tensor2D, weight: tf.Tensor, bias?: tf.Tensor): tf.Tensor2D {
  const y = mm(x, weight) as tf.Tensor2D; // [N, out]
  return bias ? tf.add(y, bias) : y;
}

/** (x * cos + rotate_half(x) * sin) * scale, for x of shape [B, T, heads, D]. */
function applyRope(
  mm: Product,
  x: tf.Tensor4D,
  cos: tf.Tensor,
  sin: tf.Tensor,
  rot: tf.Tensor2D,
  scale = 1,
): tf.Tensor4D {
  if (fusedOpsInstalled()) return fusedRope(x, cos, sin, scale);
  const [B, T, H, D] = x.shape;
  const rotated = tf.reshape(mm(tf.reshape(x, [B * T * H, D]), rot), [B, T, H, D]); // rotate_half(x)
  const rope = tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D; // [B, T, H, D]
  return scale === 1 ? rope : tf.mul(rope, scale);
}

/** An HF Linear layer by weight name: x @ W (+ b) (+ scale * (x @ A) @ B when it has a LoRA adapter). */
type Projection = (x: tf.Tensor2D, weightName: string) => tf.Tensor2D;

function projection(mm: Product, w: Weights, loraScale: number): Projection {
  return (x, name) => {
    let y = linear(mm, x, w[name], w[name.replace(/weight$/, "bias")]); // [N, out]
    const a = w[`${name}.lora_A`];
    if (a) y = tf.add(y, tf.mul(mm(mm(x, a), w[`${name}.lora_B`]), loraScale)) as tf.Tensor2D; // low-rank update
    return y;
  };
}

/** Queries (scaled by 1/sqrt(D)), keys and values of one layer, RoPE applied to q and k: [B, T, H, D], [B, T, K, D], [B, T, K, D]. */
function projectQkv(
  mm: Product,
  proj: Projection,
  w: Weights,
  p: string,
  x: tf.Tensor2D,
  dims: { B: number; T: number; H: number; K: number; D: number },
  cos: tf.Tensor,
  sin: tf.Tensor,
  rot: tf.Tensor2D,
): [tf.Tensor4D, tf.Tensor4D, tf.Tensor4D] {
  const { B, T, H, K, D } = dims;
  const fused = w[`${p}self_attn.qkv_proj.weight`];
  if (fused) {
    const qkv = linear(mm, x, fused, w[`${p}self_attn.qkv_proj.bias`]); // [B*T, (H+2K)*D]
    const [qk, v] = tf.split(qkv, [(H + K) * D, K * D], 1); // [B*T, (H+K)*D], [B*T, K*D]
    const rotated = applyRope(mm, tf.reshape(qk, [B, T, H + K, D]), cos, sin, rot); // [B, T, H+K, D]
    const [q, k] = tf.split(rotated, [H, K], 2) as tf.Tensor4D[]; // [B, T, H, D] (already / sqrt(D)), [B, T, K, D]
    return [q, k, tf.reshape(v, [B, T, K, D])];
  }
  const project = (name: string, heads: number): tf.Tensor4D =>
    tf.reshape(proj(x, `${p}self_attn.${name}.weight`), [B, T, heads, D]);
  return [
    applyRope(mm, project("q_proj", H), cos, sin, rot, 1 / Math.sqrt(D)),
    applyRope(mm, project("k_proj", K), cos, sin, rot),
    project("v_proj", K),
  ];
}

/** Weights that are the right operand of a product in every decoding step. */
const PRODUCT_WEIGHT = /(qkv_proj|o_proj|gate_proj|up_proj|down_proj)\.weight$|^lm_head\.weight$/;

/**
 * Prepares weights for decoding, the same math in fewer ops: q|k|v concatenated along the output axis;
 * each RMSNorm weight folded into the rows of the product (or products) that follow it
 * (norm(x) * g @ W = norm(x) @ diag(g) W), so that norm applies no weight; and 1/sqrt(D) folded into the
 * q columns (RoPE is linear, so scaling before it equals scaling after). The products' weights are also kept
 * packed for the native products (packRightOperand). Training keeps the HF weights.
 */
export function fuseForInference(config: LlamaConfig, w: Weights): Weights {
  const out: Weights = { ...w };
  const take = (name: string) => {
    const t = out[name];
    delete out[name];
    return t;
  };
  const qWidth = config.num_attention_heads * headDim(config);
  const qScale = 1 / Math.sqrt(headDim(config));
  const head = w["lm_head.weight"] ?? tf.transpose(w["model.embed_tokens.weight"]); // [d, V]
  for (let i = 0; i < config.num_hidden_layers; i++) {
    const p = `model.layers.${i}.`;
    const parts = ["q_proj", "k_proj", "v_proj"].map((n) => take(`${p}self_attn.${n}.weight`));
    const inNorm = take(`${p}input_layernorm.weight`);
    const columnScale = tf.tidy(() =>
      tf.concat([tf.fill([qWidth], qScale), tf.ones([parts[1].shape[1]! * 2])]),
    ); // [(H+2K)*D]
    out[`${p}self_attn.qkv_proj.weight`] = tf.tidy(() =>
      tf.mul(tf.mul(tf.concat(parts, 1), tf.reshape(inNorm, [-1, 1])), columnScale),
    ); // [d, (H+2K)*D]
    if (config.attention_bias) {
      const biases = ["q_proj", "k_proj", "v_proj"].map((n) => take(`${p}self_attn.${n}.bias`));
      out[`${p}self_attn.qkv_proj.bias`] = tf.tidy(() => tf.mul(tf.concat(biases, 0), columnScale));
      tf.dispose(biases);
    }
    // gate and up stay two products: splitting a fused [N, 2F] output costs more than the second product saves
    const postNorm = take(`${p}post_attention_layernorm.weight`);
    const mlp = [`${p}mlp.gate_proj.weight`, `${p}mlp.up_proj.weight`];
    for (const name of mlp) out[name] = tf.tidy(() => tf.mul(w[name], tf.reshape(postNorm, [-1, 1]))); // [d, F]
    tf.dispose([...parts, ...mlp.map((name) => w[name]), inNorm, postNorm, columnScale]);
  }
  const finalNorm = take("model.norm.weight");
  out["lm_head.weight"] = tf.tidy(() => tf.mul(head, tf.reshape(finalNorm, [-1, 1]))); // [d, V]
  tf.dispose([finalNorm, head]);
  for (const [name, weight] of Object.entries(out)) if (PRODUCT_WEIGHT.test(name)) packRightOperand(weight);
  return out;
}

/**
 * Runs the transformer; returns logits ([B, T, V], or [B, 1, V] with `lastOnly`). With a cache, the T new
 * positions attend to its positions too, and their keys and values are added to it.
 */
export function forward(
  config: LlamaConfig,
  w: Weights,
  rope: RopeTables,
  inputs: ForwardInputs,
): { logits: tf.Tensor3D } {
  const [B, T] = inputs.tokens.shape;
  const d = config.hidden_size;
  const H = config.num_attention_heads;
  const K = config.num_key_value_heads;
  const D = headDim(config);
  const V = config.vocab_size;
  const embed = w["model.embed_tokens.weight"] as tf.Tensor2D; // [V, d]

  const train = inputs.mode === "train";
  const mm: Product = train ? matmul : (x, y) => batchedMatMul(x, y);
  const proj = projection(mm, w, inputs.loraScale ?? 1);
  const flatTokens = tf.reshape(inputs.tokens, [B * T]); // [B*T]
  const fused = fusedOpsInstalled();
  let h = (
    fused
      ? train
        ? fusedEmbedding(embed, flatTokens)
        : gatherRows(embed, flatTokens)
      : train
        ? matmul(tf.cast(tf.oneHot(flatTokens, V), "float32"), embed) // differentiable without gather's gradient
        : tf.gather(embed, flatTokens)
  ) as tf.Tensor2D; // [B*T, d]

  const rows = (table: tf.Tensor) =>
    fused ? gatherRows(table, inputs.positions) : tf.gather(table, inputs.positions);
  const cos = tf.reshape(rows(rope.cos), [B, T, 1, D]); // [B, T, 1, D]
  const sin = tf.reshape(rows(rope.sin), [B, T, 1, D]); // [B, T, 1, D]
  const cache = inputs.cache;
  cache?.reserve(T);

  /** Decoder layer `i` on the residual stream `x`: attention then the MLP, each added back. */
  const layer = (x: tf.Tensor2D, i: number): tf.Tensor2D => {
    const p = `model.layers.${i}.`;
    let h = x;
    // --- attention block ---
    const normed = rmsNorm(h, w[`${p}input_layernorm.weight`], config.rms_norm_eps) as tf.Tensor2D; // [B*T, d]
    const [q, k, v] = projectQkv(mm, proj, w, p, normed, { B, T, H, K, D }, cos, sin, rope.rot);
    const heads = cache
      ? cachedAttention(mm, q, k, v, inputs.mask, cache, i)
      : fused
        ? fusedAttention(q, k, v, inputs.mask)
        : attention(train, mm, q, tf.transpose(k, [0, 2, 1, 3]), tf.transpose(v, [0, 2, 1, 3]), inputs.mask); // [B, T, H, D]
    const merged: tf.Tensor2D = tf.reshape(heads, [B * T, d]); // [B*T, d]
    h = tf.add(h, proj(merged, `${p}self_attn.o_proj.weight`)); // [B*T, d]
    // --- SwiGLU MLP block ---
    const y = rmsNorm(h, w[`${p}post_attention_layernorm.weight`], config.rms_norm_eps) as tf.Tensor2D; // [B*T, d]
    const gate = proj(y, `${p}mlp.gate_proj.weight`); // [B*T, F]
    const up = proj(y, `${p}mlp.up_proj.weight`); // [B*T, F]
    const act = swiGlu(gate, up) as tf.Tensor2D; // silu(gate) * up, [B*T, F]
    return tf.add(h, proj(act, `${p}mlp.down_proj.weight`)); // [B*T, d]
  };
  for (let i = 0; i < config.num_hidden_layers; i++) {
    // inference frees each layer's intermediates when it ends: held to the end of the pass, a batched prefill of a
    // few thousand positions of a 30-layer model would fill the wasm heap's 4 GiB
    const next = train ? layer(h, i) : tf.tidy(() => layer(h, i));
    if (!train) h.dispose();
    h = next;
  }
  if (cache) cache.length += T;

  let last = h;
  let outT = T;
  if (inputs.lastOnly && T > 1) {
    last = tf.reshape(tf.slice(tf.reshape(h, [B, T, d]), [0, T - 1, 0], [B, 1, d]), [B, d]); // [B, d]
    outT = 1;
  }
  const normed = rmsNorm(last, w["model.norm.weight"], config.rms_norm_eps) as tf.Tensor2D; // [B*outT, d]
  const head = w["lm_head.weight"] ?? tf.transpose(embed); // [d, V]
  const logits = tf.reshape(linear(mm, normed, head), [B, outT, V]) as tf.Tensor3D; // [B, outT, V]
  return { logits };
}

/**
 * softmax(q k^T + mask) v: q [B, T, H, D] (scaled by 1/sqrt(D)), keys and values [B, K, S, D], mask [B, 1, T, S];
 * returns [B, T, H, D]. Grouped-query attention without copying K/V: the `group` query heads sharing a kv head
 * are stacked along T.
 */
function attention(
  train: boolean,
  mm: Product,
  q: tf.Tensor4D,
  keys: tf.Tensor4D,
  values: tf.Tensor4D,
  mask: tf.Tensor4D,
): tf.Tensor4D {
  const [B, T, H, D] = q.shape;
  const [, K, S] = keys.shape;
  const group = H / K;
  const qGrouped = tf.reshape(tf.transpose(q, [0, 2, 1, 3]), [B, K, group * T, D]); // [B, K, group*T, D]
  const qk = scoreProduct(train, qGrouped, keys); // [B, K, group*T, S]
  const probs = tf.softmax(tf.add(tf.reshape(qk, [B, H, T, S]), mask)); // [B, H, T, S]
  const attended = mm(tf.reshape(probs, [B, K, group * T, S]), values); // [B, K, group*T, D]
  return T === 1
    ? tf.reshape(attended, [B, 1, H, D])
    : tf.transpose(tf.reshape(attended, [B, H, T, D]), [0, 2, 1, 3]);
}

/**
 * Attention over layer `layer` of the cache and the T new positions, whose keys and values ([B, T, K, D]) go into
 * the cache after its `length` positions: one native kernel that writes them in place where the addon is, else
 * the tensor ops of `attention` on the cache's positions read back into tensors.
 */
function cachedAttention(
  mm: Product,
  q: tf.Tensor4D,
  k: tf.Tensor4D,
  v: tf.Tensor4D,
  mask: tf.Tensor4D,
  cache: KvCache,
  layer: number,
): tf.Tensor4D {
  const layerCache = {
    keys: cache.keys[layer],
    values: cache.values[layer],
    past: cache.length,
    capacity: cache.capacity,
  };
  if (fusedOpsInstalled()) return fusedCachedAttention(q, k, v, mask, layerCache);
  const T = q.shape[1];
  cache.write(layer, k.dataSync() as Float32Array, v.dataSync() as Float32Array, T);
  const shape: [number, number, number, number] = [
    cache.rows,
    cache.kvHeads,
    cache.length + T,
    cache.headDim,
  ];
  const dense = (which: "keys" | "values") => tf.tensor4d(cache.dense(layer, which, cache.length + T), shape);
  return attention(false, mm, q, dense("keys"), dense("values"), mask);
}

/**
 * Additive attention mask [B, 1, T, S] for `T` new tokens after `past` cached positions: position t of row b
 * may see key s when s is not padding and s <= past + t.
 */
export function attentionMask(keyIsPad: ArrayLike<number>[], past: number, T: number): tf.Tensor4D {
  const B = keyIsPad.length;
  const S = past + T;
  const data = new Float32Array(B * T * S);
  for (let b = 0; b < B; b++) {
    for (let t = 0; t < T; t++) {
      for (let s = 0; s < S; s++) {
        if (s > past + t || keyIsPad[b][s] === 1) data[(b * T + t) * S + s] = -1e9;
      }
    }
  }
  return tf.tensor4d(data, [B, 1, T, S]);
}
