// Embedded engine benchmark: per zoo size, training tokens/s (SFT, batch 16 x 64 tokens), generation
// tokens/s at batch 1 and 16 with the KV cache, achieved GFLOP/s, and the cost of sampling in JS. Then the
// committed toolcall base model answering 64 production tasks in one batch, where answers end at different
// lengths and the running batch sheds finished rows (what evaluations, rollouts and the gateway do).
// At the demo size it also measures what a BLAS sgemm (NumPy's OpenBLAS, one thread) gives the training step's own
// product shapes, and runs a baseline commit's bench twice on this machine around its own measurement, for the
// speed-up side by side.
// Usage: npm run bench:engine [-- --sizes tiny,small,base] [-- --backend wasm|cpu] [-- --baseline <commit>|none]
// Writes bench/results/engine.json (the demo size, "small") and bench/results/engine-sizes.json (all sizes).
import { toolcallFamily } from "@arc/core/families";
import {
  type BackendName,
  configForSize,
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  initBackend,
  initWeights,
  type LlamaConfig,
  type ModelSize,
  parameterCount,
} from "@arc/engine";
import { nativeAddonStatus } from "../packages/engine/src/backend/native-addon.ts";
import { sampleToken } from "../packages/engine/src/inference/sampler.ts";
import { blasGflops, nativeProductGflops, type ProductShape } from "./blas-reference.ts";
import { type BaselineFigures, baselineCheckout, runBaselineBench } from "./engine-baseline.ts";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return fallback;
  return args[i].includes("=") ? args[i].split("=")[1] : args[i + 1];
};
const sizes = flag("sizes", "tiny,small,base").split(",") as ModelSize[];
/** The engine on tensorflow.js's own kernels, before the native ones: the default baseline of the speed-ups. */
const TFJS_ONLY_ENGINE_COMMIT = "31d5a60";
const baselineCommit = flag("baseline", TFJS_ONLY_ENGINE_COMMIT);
const backend = (await initBackend(flag("backend", "wasm") as BackendName)) as BackendName;
const baselineRuns: BaselineFigures[] = [];
const baseline =
  sizes.includes("small") && baselineCommit !== "none"
    ? baselineCheckout(process.cwd(), baselineCommit)
    : undefined;
if (baseline) {
  console.log(`baseline ${baselineCommit}: running its bench:engine at the demo size (1 of 2)`);
  baselineRuns.push(runBaselineBench(baseline));
}

const BATCH = 16;
const SEQ = 64;
const PROMPT = 16;
const GEN = 128;

/** Forward FLOPs per token at context length T: 2 x (weights used in matmuls) + attention scores and mixing. */
function forwardFlopsPerToken(c: LlamaConfig, T: number): number {
  const embedAsMatmul = c.vocab_size * c.hidden_size; // one-hot embedding product (training) or tied lm_head
  return (
    2 * (parameterCount(c) + (c.tie_word_embeddings ? embedAsMatmul : 0)) +
    4 * c.num_hidden_layers * T * c.hidden_size
  );
}

/** The matrix products of one training step (forward and backward) at batch x seq tokens. */
function trainingProducts(c: LlamaConfig, batch: number, seq: number): ProductShape[] {
  const N = batch * seq;
  const d = c.hidden_size;
  const D = d / c.num_attention_heads;
  const kvWidth = c.num_key_value_heads * D;
  const group = c.num_attention_heads / c.num_key_value_heads;
  const L = c.num_hidden_layers;
  const entries = batch * c.num_key_value_heads;
  const forward: ProductShape[] = [
    { m: N, k: c.vocab_size, n: d, count: 1 }, // one-hot embedding
    { m: N, k: d, n: d, count: 2 * L }, // q, o
    { m: N, k: d, n: kvWidth, count: 2 * L }, // k, v
    { m: N, k: d, n: c.intermediate_size, count: 2 * L }, // gate, up
    { m: N, k: c.intermediate_size, n: d, count: L }, // down
    { m: group * seq, k: D, n: seq, count: entries * L }, // attention scores
    { m: group * seq, k: seq, n: D, count: entries * L }, // attention mixing
    { m: N, k: d, n: c.vocab_size, count: 1 }, // head
  ];
  // each forward product A B has two in the backward pass: dA = dY B^T and dB = A^T dY
  return forward.flatMap((p) => [
    p,
    { m: p.m, k: p.n, n: p.k, count: p.count },
    { m: p.k, k: p.m, n: p.n, count: p.count },
  ]);
}

function rng(seed: number) {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
}

async function benchTraining(config: LlamaConfig, steps: number) {
  const trainer = await EmbeddedTrainEngine.create(config, initWeights(config, 1), { learningRate: 1e-3 });
  const r = rng(3);
  const row = () => Array.from({ length: SEQ / 2 }, () => Math.floor(r() * 256));
  const batch = {
    promptTokens: Array.from({ length: BATCH }, row),
    outputTokens: Array.from({ length: BATCH }, row),
    lossMask: Array.from({ length: BATCH }, () => new Array(SEQ / 2).fill(1)),
  };
  await trainer.step(batch, { kind: "sft" }); // warm-up
  const times: number[] = [];
  for (let i = 0; i < steps; i++) {
    const t0 = performance.now();
    await trainer.step(batch, { kind: "sft" });
    times.push((performance.now() - t0) / 1000);
  }
  const seconds = median(times);
  const tokens = BATCH * SEQ; // every position is computed forward and backward
  return {
    train_steps_timed: steps,
    train_tokens_per_s: tokens / seconds,
    train_gflops: (3 * forwardFlopsPerToken(config, SEQ) * tokens) / seconds / 1e9,
    train_step_s: seconds,
  };
}

async function benchGeneration(config: LlamaConfig, batch: number, repeats: number) {
  const engine = await EmbeddedInferenceEngine.create(config, initWeights(config, 1), {
    maxBatchSize: batch,
  });
  const r = rng(5);
  const requests = Array.from({ length: batch }, (_, i) => ({
    promptTokens: Array.from({ length: PROMPT }, () => Math.floor(r() * 256)),
    maxTokens: GEN,
    temperature: 1,
    seed: i,
    ignoreEos: true,
  }));
  await engine.generate(requests.map((q) => ({ ...q, maxTokens: 8 })));
  const rates: number[] = [];
  for (let k = 0; k < repeats; k++) {
    const t0 = performance.now();
    const out = await engine.generate(requests);
    const seconds = (performance.now() - t0) / 1000;
    rates.push(out.reduce((n, o) => n + o.outputTokens.length, 0) / seconds);
  }
  const tokensPerS = median(rates);
  return {
    tokensPerS,
    repeats,
    gflops: (forwardFlopsPerToken(config, PROMPT + GEN / 2) * tokensPerS) / 1e9,
  };
}

/** Microseconds to sample one token from a row of logits in JS, plain and with top-p/top-k (sorts the row). */
function benchSampling(vocab: number) {
  const logits = new Float32Array(vocab * 64);
  const r = rng(9);
  for (let i = 0; i < logits.length; i++) logits[i] = r() * 10;
  const run = (params: { temperature: number; topP: number; topK: number }) => {
    const n = 20000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sampleToken(logits, (i % 64) * vocab, vocab, params, r());
    return ((performance.now() - t0) * 1000) / n;
  };
  run({ temperature: 1, topP: 1, topK: 0 });
  return {
    sample_us_plain: run({ temperature: 1, topP: 1, topK: 0 }),
    sample_us_top_p: run({ temperature: 0.8, topP: 0.9, topK: 40 }),
  };
}

/**
 * The toolcall base answering production tasks greedily, `batch` rows at a time (rows join as others finish):
 * seconds and generated tokens/s (medians).
 */
async function benchMixedLengths(tasks: number, repeats: number, batch = tasks) {
  const family = toolcallFamily;
  const engine = await EmbeddedInferenceEngine.load("models/toolcall-base", { maxBatchSize: batch });
  const requests = family
    .generate({ split: "production", seed: 999, count: tasks })
    .map((task) => ({ messages: family.prompt(task), maxTokens: 96, temperature: 0 }));
  await engine.generate(requests.slice(0, 4));
  const seconds: number[] = [];
  const rates: number[] = [];
  for (let k = 0; k < repeats; k++) {
    const t0 = performance.now();
    const out = await engine.generate(requests);
    seconds.push((performance.now() - t0) / 1000);
    rates.push(out.reduce((n, o) => n + o.outputTokens.length, 0) / seconds[k]);
  }
  return { seconds: median(seconds), tokensPerS: median(rates), repeats };
}

const rows: Record<string, Record<string, number>> = {};
console.log(`backend: ${backend}`);
const sampling = benchSampling(264);
console.log(
  `sampling in JS: ${sampling.sample_us_plain.toFixed(1)} us/token (temperature only), ${sampling.sample_us_top_p.toFixed(1)} us/token (top-p + top-k)`,
);
for (const size of sizes) {
  const config = configForSize(size);
  const params = parameterCount(config);
  const slow = backend === "cpu" || size === "base";
  const train = await benchTraining(config, slow ? 3 : 7);
  const gen1 = await benchGeneration(config, 1, slow ? 1 : 3);
  const gen16 = await benchGeneration(config, 16, slow ? 1 : 3);
  const stepMs16 = (16 / gen16.tokensPerS) * 1000;
  rows[size] = {
    params,
    weights_mb: (params * 4) / 2 ** 20,
    train_memory_mb: (params * 4 * 4) / 2 ** 20, // weights, gradients, Adam's two moments (+ the reference copy for RL: x1.25)
    ...train,
    gen_tokens_per_s_batch1: gen1.tokensPerS,
    gen_tokens_per_s_batch16: gen16.tokensPerS,
    generate_repeats: gen16.repeats,
    gen_gflops_batch16: gen16.gflops,
    sampling_share_batch16: (16 * sampling.sample_us_plain) / 1000 / stepMs16,
  };
  const row = rows[size];
  console.log(
    `${size.padEnd(5)} ${params.toLocaleString("en-US").padStart(10)} params | train ${row.train_tokens_per_s.toFixed(0)} tok/s, ${row.train_gflops.toFixed(1)} GFLOP/s | generate b1 ${row.gen_tokens_per_s_batch1.toFixed(0)} tok/s, b16 ${row.gen_tokens_per_s_batch16.toFixed(0)} tok/s (${row.gen_gflops_batch16.toFixed(1)} GFLOP/s, sampling ${(100 * row.sampling_share_batch16).toFixed(1)}% of a step)`,
  );
}

const native = nativeAddonStatus();
console.log(`native kernels: ${native.active ? "in use" : `not in use (${native.reason})`}`);
writeBenchResults("engine-sizes", { backend, native_kernels: native.active, ...sampling, sizes: rows });
const demo = rows.small;
if (demo) {
  if (baseline) {
    console.log(`baseline ${baselineCommit}: running its bench:engine at the demo size (2 of 2)`);
    baselineRuns.push(runBaselineBench(baseline));
    baseline.close();
  }
  const shapes = trainingProducts(configForSize("small"), BATCH, SEQ);
  const blas = blasGflops(shapes);
  const nativeProducts = nativeProductGflops(shapes);
  if ("error" in blas) console.log(`BLAS reference not measured: ${blas.error}`);
  else
    console.log(
      `BLAS sgemm (NumPy ${blas.numpy}, 1 thread) on the training step's shapes: ${blas.gflops.toFixed(1)} GFLOP/s; the engine's native products: ${nativeProducts?.toFixed(1) ?? "not in use"}`,
    );
  const baselineMedian = (key: keyof Omit<BaselineFigures, "commit">) =>
    median(baselineRuns.map((r) => r[key]));
  const speedups =
    baselineRuns.length > 0
      ? {
          train: demo.train_tokens_per_s / baselineMedian("train_tokens_per_s"),
          gen_batch1: demo.gen_tokens_per_s_batch1 / baselineMedian("gen_tokens_per_s_batch1"),
          gen_batch16: demo.gen_tokens_per_s_batch16 / baselineMedian("gen_tokens_per_s_batch16"),
        }
      : undefined;
  if (speedups) {
    console.log(
      `vs ${baselineCommit} on this machine, same run: train x${speedups.train.toFixed(2)}, generate b1 x${speedups.gen_batch1.toFixed(2)}, b16 x${speedups.gen_batch16.toFixed(2)}`,
    );
  }
  const mixed = await benchMixedLengths(64, 3);
  console.log(
    `toolcall base, 64 production tasks in one batch (answers of different lengths): ${mixed.seconds.toFixed(2)} s, ${mixed.tokensPerS.toFixed(0)} tok/s`,
  );
  const heldOut = await benchMixedLengths(256, 3, 32);
  console.log(
    `toolcall base, 256 production tasks through 32 rows (a held-out judgement of training runs): ${heldOut.seconds.toFixed(2)} s, ${heldOut.tokensPerS.toFixed(0)} tok/s`,
  );
  const figures = {
    demo_size_params: demo.params,
    train_tokens_per_s: Math.round(demo.train_tokens_per_s),
    gen_tokens_per_s_batch1: Math.round(demo.gen_tokens_per_s_batch1),
    gen_tokens_per_s_batch16: Math.round(demo.gen_tokens_per_s_batch16),
    /** Training is the median of this many timed steps, generation of this many runs. */
    train_steps_timed: demo.train_steps_timed,
    generate_repeats: demo.generate_repeats,
    train_gflops: Number(demo.train_gflops.toFixed(2)),
    /** The toolcall base on 64 production tasks in one batch, greedy: answers end at different lengths. */
    gen_tokens_per_s_mixed_lengths_batch64: Math.round(mixed.tokensPerS),
    answer_64_tasks_s: Number(mixed.seconds.toFixed(2)),
    answer_64_tasks_repeats: mixed.repeats,
    /** 256 production tasks through a running batch of 32 rows, queued rows taking finished ones' places. */
    answer_256_tasks_batch32_s: Number(heldOut.seconds.toFixed(2)),
    gen_tokens_per_s_continuous_batch32: Math.round(heldOut.tokensPerS),
    backend,
    /** Whether the engine's native kernels (packages/engine/native) ran the products and fused layers. */
    native_kernels: native.active,
    /** Training GFLOP/s over what a BLAS sgemm gives the step's product shapes on the same one thread. */
    train_gflops_vs_blas: "error" in blas ? null : Number((demo.train_gflops / blas.gflops).toFixed(3)),
    blas_gflops_training_shapes: "error" in blas ? null : Number(blas.gflops.toFixed(1)),
    /** The engine's native products on the same shapes, timed the same way (hot caches, one thread). */
    native_product_gflops_training_shapes: nativeProducts ? Number(nativeProducts.toFixed(1)) : null,
    /** Training tokens/s over the baseline commit's, both measured in this run (the baseline twice, median). */
    speedup_vs_baseline: speedups ? Number(speedups.train.toFixed(2)) : null,
    gen_batch1_speedup_vs_baseline: speedups ? Number(speedups.gen_batch1.toFixed(2)) : null,
    gen_batch16_speedup_vs_baseline: speedups ? Number(speedups.gen_batch16.toFixed(2)) : null,
    baseline: baselineRuns.length > 0 ? { commit: baselineRuns[0].commit, runs: baselineRuns } : null,
  };
  console.log("wrote", writeBenchResults("engine", figures), figures);
}
