// PyTorch engine benchmark: the torch and the embedded engine on the same model (models/toolcall-base) in one run,
// one CPU thread each: SFT training tokens/s (batch 16 x 64 tokens) and generation tokens/s (batch 16, 128 new
// tokens). GPU figures are not this bench's: the worker's own Python bench writes them on a GPU machine
// (`python -m arc_tools.bench --out <repository>/bench/gpu/torch-gpu.json`).
// With --outcome it also trains the same short recipes (SFT then semi-online DPO, and GRPO) on both engines and judges
// them alike (bench/torch-outcome.ts; about 15 minutes).
// Usage: npm run bench:torch [-- --outcome]
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { GenRequest, InferenceEngine, TrainEngine } from "@arc/core";

import {
  EmbeddedInferenceEngine,
  EmbeddedTrainEngine,
  TorchInferenceEngine,
  TorchTrainEngine,
} from "@arc/engine";
import { median } from "./median.ts";
import { writeBenchResults } from "./results-file.ts";
import { outcomeOn, standardError } from "./torch-outcome.ts";

const MODEL = fileURLToPath(new URL("../models/toolcall-base", import.meta.url));
const BATCH = 16;
const SEQ = 64;
const PROMPT = 16;
const GEN = 128;
const STEPS = 10;
const REPEATS = 3;

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32;
  };
}

/** Tokens/s of SFT steps on one fixed batch of random byte ids: the median of `STEPS` timed steps after two. */
async function trainRate(engine: TrainEngine): Promise<number> {
  const r = rng(3);
  const row = () => Array.from({ length: SEQ / 2 }, () => Math.floor(r() * 256));
  const batch = {
    promptTokens: Array.from({ length: BATCH }, row),
    outputTokens: Array.from({ length: BATCH }, row),
  };
  const times: number[] = [];
  for (let i = 0; i < STEPS + 2; i++) {
    const t0 = performance.now();
    await engine.step(batch, { kind: "sft" });
    if (i >= 2) times.push((performance.now() - t0) / 1000);
  }
  return (BATCH * SEQ) / median(times);
}

/** Tokens/s of sampling `GEN` tokens for each of `BATCH` prompts: the median of `REPEATS` runs after a short one. */
async function generateRate(engine: InferenceEngine): Promise<number> {
  const r = rng(5);
  const requests: GenRequest[] = Array.from({ length: BATCH }, (_, i) => ({
    promptTokens: Array.from({ length: PROMPT }, () => Math.floor(r() * 256)),
    maxTokens: GEN,
    temperature: 1,
    seed: i,
    ignoreEos: true,
  }));
  await engine.generate(requests.map((q) => ({ ...q, maxTokens: 8 })));
  const rates: number[] = [];
  for (let k = 0; k < REPEATS; k++) {
    const t0 = performance.now();
    const out = await engine.generate(requests);
    rates.push(out.reduce((n, o) => n + o.outputTokens.length, 0) / ((performance.now() - t0) / 1000));
  }
  return median(rates);
}

const embeddedTrain = await EmbeddedTrainEngine.fromCheckpoint(MODEL, { learningRate: 1e-4 });
const torchTrain = await TorchTrainEngine.fromCheckpoint(MODEL, {
  device: "cpu",
  threads: 1,
  learningRate: 1e-4,
});
const trainTorch = await trainRate(torchTrain);
const trainEmbedded = await trainRate(embeddedTrain);
await torchTrain.close();
const torchGen = await TorchInferenceEngine.load(MODEL, { device: "cpu", threads: 1 });
const genTorch = await generateRate(torchGen);
await torchGen.close();
const genEmbedded = await generateRate(await EmbeddedInferenceEngine.load(MODEL, { maxBatchSize: BATCH }));
let outcome: Record<string, unknown> | undefined;
if (process.argv.includes("--outcome")) {
  const runsDir = await mkdtemp(join(tmpdir(), "arc-torch-outcome-"));
  const embedded = await outcomeOn("embedded", runsDir);
  const torch = await outcomeOn("torch", runsDir);
  await rm(runsDir, { recursive: true, force: true });
  const within = (key: "sft_dpo_failure_rate" | "grpo_failure_rate") =>
    Math.abs(torch[key] - embedded[key]) <= standardError(embedded[key]);
  outcome = {
    embedded,
    torch,
    standard_error_sft_dpo: standardError(embedded.sft_dpo_failure_rate),
    standard_error_grpo: standardError(embedded.grpo_failure_rate),
    sft_dpo_within_one_standard_error: within("sft_dpo_failure_rate"),
    grpo_within_one_standard_error: within("grpo_failure_rate"),
  };
  console.log(`outcome on 512 held-out production tasks: ${JSON.stringify(outcome)}`);
}

console.log(
  `CPU, ${MODEL.split("/").pop()}, one thread each: train ${trainTorch.toFixed(0)} tok/s torch vs ${trainEmbedded.toFixed(0)} embedded | generate ${genTorch.toFixed(0)} vs ${genEmbedded.toFixed(0)} tok/s`,
);
const path = writeBenchResults("torch", {
  cpu_model: "models/toolcall-base",
  cpu_train_tokens_per_s_torch: Math.round(trainTorch),
  cpu_train_tokens_per_s_embedded: Math.round(trainEmbedded),
  cpu_generate_tokens_per_s_torch: Math.round(genTorch),
  cpu_generate_tokens_per_s_embedded: Math.round(genEmbedded),
  /** Training is the median of this many timed steps (batch 16 x 64), generation of this many runs (16 x 128). */
  cpu_train_steps_timed: STEPS,
  cpu_generate_runs: REPEATS,
  /** `--outcome`: the same recipes on both engines, judged alike (absent without the flag). */
  ...(outcome ? { outcome } : {}),
});
console.log(`wrote ${path}`);
