import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Objective, StepMetrics, TokenBatch, TrainBatch, TrainEngine, WeightSource } from "@arc/core";
import type { PrefixCacheStats } from "../inference/prefix-cache.ts";
import type { AdamWOptions } from "../train/adamw.ts";
import type { LoraOptions } from "../train/lora.ts";
import { TorchWorker, type TorchWorkerOptions } from "./torch-worker.ts";

/** Where and how the torch engine runs. */
export interface TorchEngineOptions extends TorchWorkerOptions {
  /** `cpu`, `cuda`, `cuda:1`..., or `auto` (the rank's GPU when torch sees one, else the CPU; default). */
  device?: string;
  /**
   * `float32`, or `bfloat16`/`float16`: training keeps float32 master weights and runs its passes under autocast;
   * inference holds its weights in that type (default float32).
   */
  dtype?: "float32" | "bfloat16" | "float16";
  /** Seed of the LoRA adapters' initialization (default 0). */
  seed?: number;
  /** CPU threads of torch's own pool in each process (default: torch's choice under OMP_NUM_THREADS=1). */
  threads?: number;
}

/** The trainer's settings: AdamW and its schedule, clipping, micro-batches, LoRA. */
export interface TorchTrainOptions extends TorchEngineOptions, Partial<AdamWOptions> {
  /** Clip the global gradient norm to this value (0 disables; default 1). */
  maxGradNorm?: number;
  /** Rows per forward/backward pass; a larger batch accumulates gradients over several (default: all rows). */
  microBatchRows?: number;
  /** Train low-rank adapters (peft) on these projections instead of all weights. */
  lora?: LoraOptions;
}

/** What the worker's `init` reports. */
export interface TorchEngineInfo {
  device: string;
  deviceName: string;
  dtype: string;
  role: "train" | "inference";
  parameters: number;
  trainableParameters: number;
  step: number;
  version: number;
  worldSize: number;
  /** The model's vocabulary size (token ids run from 0 to it, exclusive). */
  vocabSize: number;
  /** The module a training forward goes through: the model's class, or `DistributedDataParallel` under torchrun. */
  trainModule: string | null;
  torch: string;
  /** What the worker's prefix cache holds and has saved, and its bound; null when it is off. */
  prefixCache: (PrefixCacheStats & { maxBytes: number }) | null;
}

const OPTIMIZER_KEYS = [
  "learningRate",
  "warmupSteps",
  "decaySteps",
  "minLearningRate",
  "beta1",
  "beta2",
  "epsilon",
  "weightDecay",
  "maxGradNorm",
  "microBatchRows",
] as const;

/** Weight snapshots kept on disk for inference engines to load; older ones are removed. */
const KEPT_SNAPSHOTS = 2;

/**
 * The PyTorch TrainEngine: a Python worker (torch, transformers, peft) holding the policy, its reference and
 * AdamW, driven over JSON lines. Batches go in as token ids and metrics come back; weights never cross the
 * pipe: `weights()` writes a checkpoint directory that inference engines load.
 */
export class TorchTrainEngine implements TrainEngine {
  private snapshots: string[] = [];
  private snapshotRoot: string | undefined;
  private snapshotCount = 0;

  private constructor(
    private readonly worker: TorchWorker,
    readonly info: TorchEngineInfo,
  ) {}

  /** Starts a worker that trains the checkpoint in `modelDir` (HF layout) with a fresh optimizer. */
  static async fromCheckpoint(modelDir: string, options: TorchTrainOptions = {}): Promise<TorchTrainEngine> {
    const worker = TorchWorker.start(options);
    const settings = Object.fromEntries(
      OPTIMIZER_KEYS.filter((k) => options[k] !== undefined).map((k) => [k, options[k]]),
    );
    try {
      const info = await worker.call<TorchEngineInfo>("init", {
        role: "train",
        modelDir: resolve(modelDir),
        device: options.device ?? "auto",
        dtype: options.dtype ?? "float32",
        seed: options.seed ?? 0,
        threads: options.threads,
        lora: options.lora,
        settings,
      });
      return new TorchTrainEngine(worker, info);
    } catch (error) {
      await worker.close();
      throw error;
    }
  }

  /** Continues the training `save` wrote in `dir`: weights, optimizer, step, reference, adapters. */
  static async resume(dir: string, options: TorchTrainOptions = {}): Promise<TorchTrainEngine> {
    const engine = await TorchTrainEngine.fromCheckpoint(dir, options);
    try {
      await engine.load(dir);
    } catch (error) {
      await engine.close();
      throw error;
    }
    return engine;
  }

  async logprobs(batch: TokenBatch): Promise<Float32Array[]> {
    const rows = await this.worker.call<number[][]>("logprobs", { batch: plainBatch(batch) });
    return rows.map((r) => Float32Array.from(r));
  }

  step(batch: TrainBatch, objective: Objective): Promise<StepMetrics> {
    return this.worker.call<StepMetrics>("step", { batch: plainBatch(batch), objective });
  }

  /**
   * The whole batch's gradients without an update, written to `path` as safetensors by HF weight name (LoRA:
   * by peft's adapter names); the objective's loss and figures are returned. For comparing engines.
   */
  batchGradients(
    batch: TrainBatch,
    objective: Objective,
    path: string,
  ): Promise<{ loss: number; extra: Record<string, number> }> {
    return this.worker.call("gradients", { batch: plainBatch(batch), objective, path: resolve(path) });
  }

  /** Writes the current policy (adapters merged) as a checkpoint directory and returns it. */
  async weights(): Promise<WeightSource> {
    this.snapshotRoot ??= await mkdtemp(join(tmpdir(), "arc-torch-weights-"));
    const dir = join(this.snapshotRoot, `snapshot-${++this.snapshotCount}`);
    await this.worker.call("save", { dir, weightsOnly: true });
    this.snapshots.push(dir);
    while (this.snapshots.length > KEPT_SNAPSHOTS)
      await rm(this.snapshots.shift()!, { recursive: true, force: true });
    return { kind: "checkpoint", dir };
  }

  async save(dir: string): Promise<void> {
    await this.worker.call("save", { dir: resolve(dir) });
  }

  async load(dir: string): Promise<void> {
    await this.worker.call("load", { dir: resolve(dir) });
  }

  async syncReference(): Promise<void> {
    await this.worker.call("syncReference");
  }

  /** Optimizer steps taken so far. */
  async getStep(): Promise<number> {
    return (await this.worker.call<TorchEngineInfo>("info")).step;
  }

  /** Stops the worker and removes the weight snapshots it wrote. */
  async close(): Promise<void> {
    await this.worker.close();
    if (this.snapshotRoot) await rm(this.snapshotRoot, { recursive: true, force: true });
  }
}

/** The batch's fields as plain arrays (typed arrays would not survive JSON). */
function plainBatch(batch: TrainBatch): TrainBatch {
  const rows = (x: ArrayLike<number>[] | undefined) => x?.map((r) => Array.from(r));
  return {
    promptTokens: batch.promptTokens,
    outputTokens: batch.outputTokens,
    lossMask: rows(batch.lossMask),
    advantages: batch.advantages,
    oldLogprobs: rows(batch.oldLogprobs),
    refLogprobs: rows(batch.refLogprobs),
    proximalLogprobs: rows(batch.proximalLogprobs),
  };
}
