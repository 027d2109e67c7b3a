import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Objective, StepMetrics, TokenBatch, TrainBatch, TrainEngine, WeightSource } from "@arc/core";
import { initBackend, tf } from "../backend/tf-backend.ts";
import { readHfCheckpoint, writeHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { type NamedTensor, readSafetensors, writeSafetensors } from "../checkpoint/safetensors.ts";
import { type RopeTables, ropeTables, type Weights } from "../model/llama.ts";
import type { LlamaConfig } from "../model/llama-config.ts";
import { toEngineTensor, toHfTensor } from "../model/weight-layout.ts";
import { AdamW, type AdamWOptions } from "./adamw.ts";
import { gridLogprobs } from "./grid-logprobs.ts";
import { dpoLoss } from "./losses/dpo-loss.ts";
import { grpoLoss } from "./losses/grpo-loss.ts";
import { sftLoss } from "./losses/sft-loss.ts";
import { offGrid, onGrid, type TokenGrid, tokenGrid } from "./token-grid.ts";

/** Optimiser settings of the embedded trainer; every field has a default. */
export interface TrainEngineOptions extends Partial<AdamWOptions> {
  /** Clip the global gradient norm to this value (0 disables; default 1). */
  maxGradNorm?: number;
}

const DEFAULTS: AdamWOptions & { maxGradNorm: number } = {
  learningRate: 1e-3,
  warmupSteps: 0,
  beta1: 0.9,
  beta2: 0.999,
  epsilon: 1e-8,
  weightDecay: 0,
  maxGradNorm: 1,
};

let engineCounter = 0;

/**
 * The embedded TrainEngine: the policy as tensorflow.js variables, a frozen reference copy, AdamW,
 * gradient clipping, and the SFT / DPO / GRPO objectives. Checkpoints are HF directories with the
 * optimizer state (`optimizer.safetensors`, `trainer_state.json`) beside the weights.
 */
export class EmbeddedTrainEngine implements TrainEngine {
  readonly config: LlamaConfig;
  private readonly params = new Map<string, tf.Variable>();
  private reference: Weights = {};
  private readonly rope: RopeTables;
  private optimizer: AdamW;
  private readonly maxGradNorm: number;
  private readonly prefix = `arc${engineCounter++}/`;

  private constructor(config: LlamaConfig, tensors: Map<string, NamedTensor>, options: TrainEngineOptions) {
    this.config = config;
    this.rope = ropeTables(config);
    const settings = { ...DEFAULTS, ...options };
    this.maxGradNorm = settings.maxGradNorm;
    this.optimizer = new AdamW(settings);
    this.assignWeights(tensors);
  }

  /** A trainer over in-memory weights (HF names and layout, float32). */
  static async create(
    config: LlamaConfig,
    tensors: Map<string, NamedTensor>,
    options: TrainEngineOptions = {},
  ): Promise<EmbeddedTrainEngine> {
    await initBackend();
    return new EmbeddedTrainEngine(config, tensors, options);
  }

  /** A trainer over a checkpoint directory; its optimizer state is restored when present. */
  static async fromCheckpoint(dir: string, options: TrainEngineOptions = {}): Promise<EmbeddedTrainEngine> {
    await initBackend();
    const { config, tensors } = await readHfCheckpoint(dir);
    const engine = new EmbeddedTrainEngine(config, tensors, options);
    await engine.loadOptimizer(dir);
    return engine;
  }

  /** Optimizer steps taken so far. */
  getStep(): number {
    return this.optimizer.step;
  }

  private assignWeights(tensors: Map<string, NamedTensor>): void {
    for (const [name, t] of tensors) {
      const value = toEngineTensor(name, t);
      const existing = this.params.get(name);
      if (existing) {
        existing.assign(value);
        value.dispose();
      } else this.params.set(name, tf.variable(value, true, this.prefix + name));
      if (!existing) value.dispose();
    }
    this.snapshotReference();
  }

  private snapshotReference(): void {
    for (const t of Object.values(this.reference)) t.dispose();
    this.reference = {};
    for (const [name, v] of this.params) this.reference[name] = tf.clone(v);
  }

  private policy(): Weights {
    return Object.fromEntries(this.params);
  }

  async syncReference(): Promise<void> {
    this.snapshotReference();
  }

  async logprobs(batch: TokenBatch): Promise<Float32Array[]> {
    return this.logprobsWith(
      this.policy(),
      tokenGrid(batch, this.config.vocab_size, this.config.max_position_embeddings),
    );
  }

  private logprobsWith(weights: Weights, grid: TokenGrid): Float32Array[] {
    const logp = tf.tidy(() => gridLogprobs(this.config, weights, this.rope, grid).logp);
    const data = logp.dataSync() as Float32Array;
    logp.dispose();
    return offGrid(grid, data);
  }

  async step(batch: TrainBatch, objective: Objective): Promise<StepMetrics> {
    const grid = tokenGrid(batch, this.config.vocab_size, this.config.max_position_embeddings);
    const B = grid.rows;
    const G = grid.length - 1;
    const needsRef = objective.kind === "dpo" || (objective.kind === "grpo" && objective.klCoef !== 0);
    const refGrid =
      needsRef && !batch.refLogprobs
        ? onGrid(
            grid,
            this.logprobsWith(this.reference, grid).map((r) => Array.from(r)),
            "refLogprobs",
          )
        : batch.refLogprobs
          ? onGrid(grid, batch.refLogprobs, "batch.refLogprobs")
          : undefined;
    if (objective.kind === "dpo" && B % 2 !== 0) {
      throw new TypeError(
        `batch: DPO expects (chosen, rejected) row pairs, got an odd number of rows (${B})`,
      );
    }
    let oldGrid: Float32Array | undefined;
    let advantages: number[] | undefined;
    if (objective.kind === "grpo") {
      advantages = batch.advantages;
      if (!advantages || advantages.length !== B) {
        throw new TypeError(
          `batch.advantages: GRPO expects one advantage per row (${B}), got ${advantages?.length ?? "none"}`,
        );
      }
      oldGrid = batch.oldLogprobs
        ? onGrid(grid, batch.oldLogprobs, "batch.oldLogprobs")
        : onGrid(
            grid,
            this.logprobsWith(this.policy(), grid).map((r) => Array.from(r)),
            "oldLogprobs",
          );
    }

    const extraOut: Record<string, tf.Scalar> = {};
    const { value, grads } = tf.variableGrads(() => {
      const mask = tf.tensor2d(grid.mask, [B, G]);
      const ref = refGrid ? tf.tensor2d(refGrid, [B, G]) : undefined;
      const wantEntropy = objective.kind === "grpo";
      const { logp, entropy } = gridLogprobs(this.config, this.policy(), this.rope, grid, wantEntropy);
      let result: { loss: tf.Scalar; extra: Record<string, tf.Scalar> };
      if (objective.kind === "sft") result = sftLoss(logp, mask);
      else if (objective.kind === "dpo")
        result = dpoLoss(logp, ref!, mask, objective.beta ?? 0.1, objective.loss ?? "sigmoid");
      else {
        result = grpoLoss(
          logp,
          tf.tensor2d(oldGrid!, [B, G]),
          tf.tensor2d(advantages!, [B, 1]),
          mask,
          objective,
          ref,
          entropy,
        );
      }
      for (const [k, v] of Object.entries(result.extra)) extraOut[k] = tf.keep(tf.clone(v)) as tf.Scalar;
      return result.loss;
    }, [...this.params.values()]);

    const named = new Map<string, tf.Tensor>();
    for (const [name, v] of this.params) {
      const g = grads[v.name];
      if (g) named.set(name, g);
    }
    const norm = tf
      .tidy(() => tf.sqrt(tf.addN([...named.values()].map((g) => tf.sum(tf.square(g))))))
      .dataSync()[0];
    if (this.maxGradNorm > 0 && norm > this.maxGradNorm) {
      const scale = this.maxGradNorm / (norm + 1e-6);
      for (const [name, g] of named) {
        named.set(name, tf.mul(g, scale));
        g.dispose();
      }
    }
    const lr = this.optimizer.apply(this.params, named);
    for (const g of named.values()) g.dispose();
    const loss = value.dataSync()[0];
    value.dispose();
    const extra: Record<string, number> = {};
    for (const [k, v] of Object.entries(extraOut)) {
      extra[k] = v.dataSync()[0];
      v.dispose();
    }
    return {
      step: this.optimizer.step,
      loss,
      gradNorm: norm,
      learningRate: lr,
      tokens: grid.mask.reduce((a, b) => a + (b > 0 ? 1 : 0), 0),
      extra,
    };
  }

  /** The policy in HF layout, by HF name. */
  exportTensors(): Map<string, NamedTensor> {
    const out = new Map<string, NamedTensor>();
    for (const [name, v] of this.params) out.set(name, toHfTensor(name, v));
    return out;
  }

  weights(): WeightSource {
    return { kind: "tensors", tensors: this.exportTensors() };
  }

  async save(dir: string): Promise<void> {
    await writeHfCheckpoint(dir, this.config, this.exportTensors());
    const state = new Map<string, NamedTensor>();
    for (const [name, t] of this.optimizer.exp_avg)
      state.set(`exp_avg.${name}`, { shape: [...t.shape], data: t.dataSync() as Float32Array });
    for (const [name, t] of this.optimizer.exp_avg_sq)
      state.set(`exp_avg_sq.${name}`, { shape: [...t.shape], data: t.dataSync() as Float32Array });
    for (const [name, t] of Object.entries(this.reference))
      state.set(`reference.${name}`, { shape: [...t.shape], data: t.dataSync() as Float32Array });
    await writeSafetensors(join(dir, "optimizer.safetensors"), state);
    await writeFile(
      join(dir, "trainer_state.json"),
      JSON.stringify(
        { step: this.optimizer.step, optimizer: this.optimizer.options, maxGradNorm: this.maxGradNorm },
        null,
        2,
      ),
    );
  }

  async load(dir: string): Promise<void> {
    const { config, tensors } = await readHfCheckpoint(dir);
    for (const key of Object.keys(this.config) as (keyof LlamaConfig)[]) {
      if (config[key] !== this.config[key]) {
        throw new Error(
          `${dir}/config.json: ${key} is ${config[key]}, expected ${this.config[key]} (this trainer's architecture)`,
        );
      }
    }
    this.assignWeights(tensors);
    await this.loadOptimizer(dir);
  }

  private async loadOptimizer(dir: string): Promise<void> {
    let stateJson: { step: number; optimizer: AdamWOptions };
    try {
      stateJson = JSON.parse(await readFile(join(dir, "trainer_state.json"), "utf8"));
    } catch {
      return; // a plain model checkpoint: fresh optimizer
    }
    const state = await readSafetensors(join(dir, "optimizer.safetensors"));
    this.optimizer = new AdamW({ ...this.optimizer.options, ...stateJson.optimizer });
    this.optimizer.step = stateJson.step;
    for (const [key, t] of state) {
      const dot = key.indexOf(".");
      const kind = key.slice(0, dot);
      const name = key.slice(dot + 1);
      const tensor = tf.tensor(t.data, t.shape);
      if (kind === "exp_avg") this.optimizer.exp_avg.set(name, tensor);
      else if (kind === "exp_avg_sq") this.optimizer.exp_avg_sq.set(name, tensor);
      else if (kind === "reference") {
        this.reference[name]?.dispose();
        this.reference[name] = tensor;
      } else tensor.dispose();
    }
  }
}
