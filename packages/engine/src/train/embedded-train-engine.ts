import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Objective, StepMetrics, TokenBatch, TrainBatch, TrainEngine, WeightSource } from "@arc/core";
import { initBackend, tf } from "../backend/tf-backend.ts";
import { CheckpointError } from "../checkpoint/checkpoint-error.ts";
import { readHfCheckpoint, writeHfCheckpoint } from "../checkpoint/hf-checkpoint.ts";
import { type NamedTensor, readSafetensors, writeSafetensors } from "../checkpoint/safetensors.ts";
import { type RopeTables, ropeTables, type Weights } from "../model/llama.ts";
import type { LlamaConfig } from "../model/llama-config.ts";
import { toEngineTensor, toHfTensor } from "../model/weight-layout.ts";
import { ADAMW_DEFAULTS, AdamW, type AdamWOptions } from "./adamw.ts";
import {
  type BatchTotals,
  GradientWorkers,
  type ShardGradients,
  shardRows,
  type WireTensor,
  type WorkerTraffic,
} from "./gradient-workers.ts";
import { gridLogprobs } from "./grid-logprobs.ts";
import { initAdapter, type LoraOptions, loraWeightNames, mergeAdapter } from "./lora.ts";
import { dpoLoss } from "./losses/dpo-loss.ts";
import { grpoLoss } from "./losses/grpo-loss.ts";
import { sftLoss } from "./losses/sft-loss.ts";
import { writePeftAdapter } from "./peft-adapter.ts";
import {
  assertTrainStepFits,
  MICRO_BATCH_HEAP_SHARE,
  rowsThatFit,
  WASM_HEAP_LIMIT_BYTES,
} from "./step-memory.ts";
import { offGrid, onGrid, type TokenGrid, tokenGrid } from "./token-grid.ts";

/** Optimiser settings of the embedded trainer; every field has a default. */
export interface TrainEngineOptions extends Partial<AdamWOptions> {
  /** Clip the global gradient norm to this value (0 disables; default 1). */
  maxGradNorm?: number;
  /** Train low-rank adapters on these projections instead of all weights; exports merge them. */
  lora?: LoraOptions;
  /** Seed of the LoRA A matrices (default 0). */
  seed?: number;
  /**
   * Rows per forward/backward pass: a larger batch is split into micro-batches whose gradients add up to the
   * whole batch's before the one optimizer update (default: on wasm, as many rows as fit in its heap; else all).
   */
  microBatchRows?: number;
  /**
   * Threads that run each step's forward/backward passes (default 1): the batch's rows are split between this
   * thread and `trainThreads - 1` gradient worker threads, and their gradients summed before the one update.
   */
  trainThreads?: number;
}

/** What `trainer_state.json` holds. */
interface TrainerState {
  step: number;
  optimizer: AdamWOptions;
  maxGradNorm: number;
  lora?: LoraOptions;
}

const DEFAULTS: AdamWOptions & { maxGradNorm: number } = { ...ADAMW_DEFAULTS, maxGradNorm: 1 };

let engineCounter = 0;

type GrpoObjective = Extract<Objective, { kind: "grpo" }>;

/** A GRPO objective with its documented defaults filled in. */
function grpoDefaults(o: GrpoObjective): Required<Omit<GrpoObjective, "behaviourWeightCap">> & GrpoObjective {
  return {
    ...o,
    clipEpsilon: o.clipEpsilon ?? 0.2,
    klCoef: o.klCoef ?? 0,
    entropyCoef: o.entropyCoef ?? 0,
    aggregation: o.aggregation ?? "token",
    decoupled: o.decoupled ?? false,
  };
}

/** `x`'s value, through which no gradient flows back. */
const stopGradient = tf.customGrad(((x: tf.Tensor) => ({
  value: tf.clone(x),
  gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy),
})) as unknown as Parameters<typeof tf.customGrad>[0]) as <T extends tf.Tensor>(x: T) => T;

/**
 * pi_prox / pi_behaviour per grid position, 0 where it exceeds `cap` (AReaL drops such tokens); a constant
 * of the loss, through which no gradient flows back.
 */
function behaviourWeights(prox: tf.Tensor2D, behaviour: tf.Tensor2D, cap?: number): tf.Tensor2D {
  const weights = tf.customGrad(((p: tf.Tensor, b: tf.Tensor) => {
    const w = tf.exp(tf.sub(p, b));
    return {
      value: cap === undefined ? w : tf.where(tf.greater(w, cap), tf.zerosLike(w), w),
      gradFunc: (dy: tf.Tensor) => [tf.zerosLike(dy), tf.zerosLike(dy)],
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]) as (p: tf.Tensor, b: tf.Tensor) => tf.Tensor2D;
  return weights(prox, behaviour);
}

/** A whole batch's counts, which the loss of every micro-batch and shard divides by (see the losses' `totals`). */
function batchTotals(grid: TokenGrid): BatchTotals {
  const G = grid.length - 1;
  let tokens = 0;
  let chosenTokens = 0;
  for (let b = 0; b < grid.rows; b++) {
    let row = 0;
    for (let t = 0; t < G; t++) row += grid.mask[b * G + t];
    tokens += row;
    if (b % 2 === 0) chosenTokens += row;
  }
  return { rows: grid.rows, tokens, chosenTokens, cells: grid.rows * G };
}

/** Adds `g` to the gradient held under `name` (taking ownership of `g`). */
function addInto(grads: Map<string, tf.Tensor>, name: string, g: tf.Tensor): void {
  const sum = grads.get(name);
  if (!sum) {
    grads.set(name, g);
    return;
  }
  grads.set(name, tf.add(sum, g));
  sum.dispose();
  g.dispose();
}

/** Tensors as they cross threads, by name. */
function toWire(tensors: Iterable<[string, tf.Tensor]>): WireTensor[] {
  return [...tensors].map(([name, t]) => ({ name, shape: [...t.shape], data: t.dataSync() as Float32Array }));
}

/** Rows [start, end) of a batch, with every per-row field sliced alike. */
function sliceRows(batch: TrainBatch, start: number, end: number): TrainBatch {
  if (start === 0 && end >= batch.promptTokens.length) return batch;
  const rows = <T>(field: T[] | undefined) => field?.slice(start, end);
  return {
    promptTokens: batch.promptTokens.slice(start, end),
    outputTokens: batch.outputTokens.slice(start, end),
    lossMask: rows(batch.lossMask),
    advantages: rows(batch.advantages),
    oldLogprobs: rows(batch.oldLogprobs),
    refLogprobs: rows(batch.refLogprobs),
    proximalLogprobs: rows(batch.proximalLogprobs),
  };
}

/**
 * The embedded TrainEngine: the policy as tensorflow.js variables, a frozen reference copy, AdamW,
 * gradient clipping, and the SFT / DPO / GRPO objectives; optionally LoRA adapters as the only trained
 * weights. Checkpoints are HF directories (adapters merged) with the training state
 * (`optimizer.safetensors`, `trainer_state.json`) beside the weights, and with LoRA the adapters in PEFT's layout
 * under `adapter/`.
 */
export class EmbeddedTrainEngine implements TrainEngine {
  readonly config: LlamaConfig;
  /** The checkpoint the engine was loaded from, whose tokenizer its saves keep (none: Arc's byte tokenizer). */
  private tokenizerDir: string | undefined;
  private readonly params = new Map<string, tf.Variable>();
  /** LoRA adapters by `<weight name>.lora_A` / `.lora_B` ([in, r] and [r, out]); empty without LoRA. */
  private readonly adapters = new Map<string, tf.Variable>();
  private lora: LoraOptions | undefined;
  private reference: Weights = {};
  private readonly rope: RopeTables;
  private optimizer: AdamW;
  private readonly maxGradNorm: number;
  private readonly microBatchRows: number | undefined;
  private readonly seed: number;
  private readonly prefix = `arc${engineCounter++}/`;
  private gradientWorkers: GradientWorkers | undefined;
  /** Bumped whenever the base weights change (every step without LoRA), so gradient workers are sent them only then. */
  private paramsVersion = 0;
  /** Bumped whenever the LoRA adapters change (every step with LoRA). */
  private adaptersVersion = 0;
  /** Bumped whenever the reference model changes. */
  private referenceVersion = 0;

  private constructor(config: LlamaConfig, tensors: Map<string, NamedTensor>, options: TrainEngineOptions) {
    this.config = config;
    this.rope = ropeTables(config);
    const settings = { ...DEFAULTS, ...options };
    this.maxGradNorm = settings.maxGradNorm;
    if (
      options.microBatchRows !== undefined &&
      !(Number.isInteger(options.microBatchRows) && options.microBatchRows >= 1)
    )
      throw new RangeError(`microBatchRows: expected a positive integer, got ${options.microBatchRows}`);
    this.microBatchRows = options.microBatchRows;
    if (
      options.trainThreads !== undefined &&
      !(Number.isInteger(options.trainThreads) && options.trainThreads >= 1)
    ) {
      throw new RangeError(`trainThreads: expected a positive integer, got ${options.trainThreads}`);
    }
    this.optimizer = new AdamW(settings);
    this.seed = options.seed ?? 0;
    this.assignWeights(tensors);
    if (options.lora) this.addAdapters(options.lora);
  }

  private addAdapters(lora: LoraOptions): void {
    this.lora = lora;
    loraWeightNames(this.config, lora).forEach((name, i) => {
      const { a, b } = initAdapter(this.params.get(name)!, lora.rank, this.seed * 7919 + i);
      this.adapters.set(`${name}.lora_A`, tf.variable(a, true, `${this.prefix}${name}.lora_A`));
      this.adapters.set(`${name}.lora_B`, tf.variable(b, true, `${this.prefix}${name}.lora_B`));
      tf.dispose([a, b]);
    });
  }

  private loraScale(): number {
    return this.lora ? this.lora.alpha / this.lora.rank : 1;
  }

  /** The weights the optimizer updates: the adapters with LoRA, else every weight. */
  private trainable(): Map<string, tf.Variable> {
    return this.lora ? this.adapters : this.params;
  }

  /** The policy in the engine's layout with adapters merged (for the reference copy and exports). */
  private merged(): Map<string, tf.Tensor> {
    const out = new Map<string, tf.Tensor>();
    for (const [name, v] of this.params) {
      const a = this.adapters.get(`${name}.lora_A`);
      const b = this.adapters.get(`${name}.lora_B`);
      out.set(name, a && b ? mergeAdapter(v, a, b, this.loraScale()) : tf.clone(v));
    }
    return out;
  }

  /** A trainer over in-memory weights (HF names and layout, float32). */
  static async create(
    config: LlamaConfig,
    tensors: Map<string, NamedTensor>,
    options: TrainEngineOptions = {},
  ): Promise<EmbeddedTrainEngine> {
    await initBackend();
    return EmbeddedTrainEngine.build(config, tensors, options);
  }

  /** Constructs the engine, then starts its gradient worker threads when `trainThreads` asks for any. */
  private static async build(
    config: LlamaConfig,
    tensors: Map<string, NamedTensor>,
    options: TrainEngineOptions,
  ): Promise<EmbeddedTrainEngine> {
    const engine = new EmbeddedTrainEngine(config, tensors, options);
    const workers = (options.trainThreads ?? 1) - 1;
    if (workers > 0) {
      engine.gradientWorkers = await GradientWorkers.start(workers, {
        type: "init",
        config,
        tensors: [...tensors].map(([name, t]) => ({ name, shape: t.shape, data: t.data })),
        lora: options.lora,
        microBatchRows: options.microBatchRows,
      });
    }
    return engine;
  }

  /** Bytes of weights sent to the gradient worker threads so far, by part; undefined when training on one thread. */
  workerTraffic(): WorkerTraffic | undefined {
    return this.gradientWorkers && { ...this.gradientWorkers.traffic };
  }

  /** Stops the gradient worker threads, if any; the engine then trains on its own thread alone. */
  async close(): Promise<void> {
    await this.gradientWorkers?.close();
    this.gradientWorkers = undefined;
  }

  /**
   * A new trainer starting from a checkpoint's weights, with `options` and a fresh optimizer: step 0, Adam's
   * moments empty, the reference model those weights. Training state saved beside the weights (a run's own
   * checkpoint) is ignored; `resume` continues it instead.
   */
  static async fromCheckpoint(dir: string, options: TrainEngineOptions = {}): Promise<EmbeddedTrainEngine> {
    await initBackend();
    const { config, tensors } = await readHfCheckpoint(dir);
    const engine = await EmbeddedTrainEngine.build(config, tensors, options);
    engine.tokenizerDir = dir;
    return engine;
  }

  /**
   * Continues the training saved in a checkpoint directory by `save`: weights, optimizer settings, step, Adam's
   * moments, reference model and LoRA adapters. A checkpoint without training state starts as `fromCheckpoint`.
   */
  static async resume(dir: string, options: TrainEngineOptions = {}): Promise<EmbeddedTrainEngine> {
    const engine = await EmbeddedTrainEngine.fromCheckpoint(dir, options);
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
    this.paramsVersion++;
    this.snapshotReference();
  }

  private snapshotReference(): void {
    for (const t of Object.values(this.reference)) t.dispose();
    this.reference = Object.fromEntries(this.merged());
    this.referenceVersion++;
  }

  /** The reference model in the engine's layout, for a gradient worker. */
  private referenceState(): WireTensor[] {
    return toWire(Object.entries(this.reference));
  }

  /** Takes the trainer thread's base weights or LoRA adapters (a gradient worker's side of its `sync`). */
  setTrainState(part: "params" | "adapters", tensors: WireTensor[]): void {
    const vars = part === "params" ? this.params : this.adapters;
    tf.tidy(() => {
      for (const t of tensors) {
        const v = vars.get(t.name);
        if (!v)
          throw new Error(`train state: no ${part === "params" ? "weight" : "adapter"} named ${t.name}`);
        v.assign(tf.tensor(t.data, t.shape));
      }
    });
  }

  /** Takes the trainer thread's reference model (a gradient worker's side of `referenceState`). */
  setReference(tensors: WireTensor[]): void {
    for (const t of Object.values(this.reference)) t.dispose();
    this.reference = Object.fromEntries(tensors.map((t) => [t.name, tf.tensor(t.data, t.shape)]));
  }

  private policy(): Weights {
    return { ...Object.fromEntries(this.params), ...Object.fromEntries(this.adapters) };
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
    const logp = tf.tidy(
      () => gridLogprobs(this.config, weights, this.rope, grid, false, this.loraScale()).logp,
    );
    const data = logp.dataSync() as Float32Array;
    logp.dispose();
    return offGrid(grid, data);
  }

  async step(batch: TrainBatch, objective: Objective): Promise<StepMetrics> {
    const grid = tokenGrid(batch, this.config.vocab_size, this.config.max_position_embeddings);
    const B = grid.rows;
    const grpo = objective.kind === "grpo" ? grpoDefaults(objective) : undefined;
    if (objective.kind === "dpo" && B % 2 !== 0) {
      throw new TypeError(
        `batch: DPO expects (chosen, rejected) row pairs, got an odd number of rows (${B})`,
      );
    }
    if (grpo) {
      if (!batch.advantages || batch.advantages.length !== B) {
        throw new TypeError(
          `batch.advantages: GRPO expects one advantage per row (${B}), got ${batch.advantages?.length ?? "none"}`,
        );
      }
      if (grpo.decoupled && !batch.oldLogprobs) {
        throw new TypeError(
          "batch.oldLogprobs: the decoupled GRPO objective needs the behaviour policy's log-probs",
        );
      }
    }
    const totals = batchTotals(grid);
    const multiple = objective.kind === "dpo" ? 2 : 1;
    const shards = this.gradientWorkers ? shardRows(B, multiple, this.gradientWorkers.size + 1) : [[0, B]];
    const [[ownStart, ownEnd], ...workerShards] = shards;
    let remote: Promise<ShardGradients[]> | undefined;
    if (this.gradientWorkers && workerShards.length > 0) {
      this.gradientWorkers.sync({
        params: { version: this.paramsVersion, tensors: () => toWire(this.params) },
        adapters: { version: this.adaptersVersion, tensors: () => toWire(this.adapters) },
        reference: { version: this.referenceVersion, tensors: () => this.referenceState() },
      });
      remote = this.gradientWorkers.gradients(
        workerShards.map(([start, end]) => sliceRows(batch, start, end)),
        objective,
        totals,
      );
    }
    remote?.catch(() => {}); // awaited below, after this thread's own shard
    const own = this.shardGradients(
      ownEnd - ownStart === B ? batch : sliceRows(batch, ownStart, ownEnd),
      objective,
      totals,
      ownEnd - ownStart === B ? grid : undefined,
    );
    let { loss } = own;
    const { extra, grads } = own;
    let parts: ShardGradients[] = [];
    try {
      parts = (await remote) ?? [];
    } catch (error) {
      for (const g of grads.values()) g.dispose();
      throw error;
    }
    for (const part of parts) {
      loss += part.loss;
      for (const [k, v] of Object.entries(part.extra)) extra[k] = (extra[k] ?? 0) + v;
      for (const g of part.grads) addInto(grads, g.name, tf.tensor(g.data, g.shape));
    }
    const values = new Map<string, Float32Array>();
    let squares = 0;
    for (const [name, g] of grads) {
      const data = g.dataSync() as Float32Array;
      for (let i = 0; i < data.length; i++) squares += data[i] * data[i];
      values.set(name, data);
    }
    const norm = Math.sqrt(squares);
    const clip = this.maxGradNorm > 0 && norm > this.maxGradNorm ? this.maxGradNorm / (norm + 1e-6) : 1;
    const lr = this.optimizer.apply(this.trainable(), values, clip);
    if (this.lora) this.adaptersVersion++;
    else this.paramsVersion++;
    for (const g of grads.values()) g.dispose();
    return {
      step: this.optimizer.step,
      loss,
      gradNorm: norm,
      learningRate: lr,
      tokens: grid.mask.reduce((a, b) => a + (b > 0 ? 1 : 0), 0),
      extra,
    };
  }

  /**
   * Loss, figures and summed gradients of `batch`, a shard of a whole batch whose `totals` every loss divides by,
   * in as many micro-batches as the heap needs; `grid` is the shard's token grid when the caller already has it.
   * A gradient worker thread runs this on its shard of each step.
   */
  shardGradients(
    batch: TrainBatch,
    objective: Objective,
    totals: BatchTotals,
    grid?: TokenGrid,
  ): { loss: number; extra: Record<string, number>; grads: Map<string, tf.Tensor> } {
    const shardGrid = grid ?? tokenGrid(batch, this.config.vocab_size, this.config.max_position_embeddings);
    const grpo = objective.kind === "grpo" ? grpoDefaults(objective) : undefined;
    const rowsPerPass = this.rowsPerPass(shardGrid, objective.kind === "dpo" ? 2 : 1);
    const grads = new Map<string, tf.Tensor>();
    let loss = 0;
    const extra: Record<string, number> = {};
    for (let start = 0; start < shardGrid.rows; start += rowsPerPass) {
      const rows = sliceRows(batch, start, start + rowsPerPass);
      const part = this.gradients(rows, objective, grpo, totals, rows === batch ? shardGrid : undefined);
      loss += part.loss;
      for (const [k, v] of Object.entries(part.extra)) extra[k] = (extra[k] ?? 0) + v;
      for (const [name, g] of part.grads) addInto(grads, name, g);
    }
    return { loss, extra, grads };
  }

  /**
   * Rows of `grid` one forward/backward pass takes (a multiple of `multiple`): `microBatchRows` when set, else on
   * wasm as many as its heap holds (a RangeError when not even `multiple` rows fit), else all of them.
   */
  private rowsPerPass(grid: TokenGrid, multiple: number): number {
    let rows = this.microBatchRows ?? grid.rows;
    if (tf.getBackend() === "wasm") {
      assertTrainStepFits(this.config, multiple, grid.length);
      rows = Math.min(
        rows,
        rowsThatFit(this.config, grid.length, WASM_HEAP_LIMIT_BYTES * MICRO_BATCH_HEAP_SHARE),
      );
    }
    return Math.max(multiple, rows - (rows % multiple));
  }

  /**
   * Loss, figures and gradients of one micro-batch, each scaled to its share of the whole batch (`totals`);
   * `batchGrid` is the micro-batch's token grid when the caller already has it (a batch taken in one pass).
   */
  private gradients(
    batch: TrainBatch,
    objective: Objective,
    grpo: ReturnType<typeof grpoDefaults> | undefined,
    totals: BatchTotals,
    batchGrid?: TokenGrid,
  ): { loss: number; extra: Record<string, number>; grads: Map<string, tf.Tensor> } {
    const grid = batchGrid ?? tokenGrid(batch, this.config.vocab_size, this.config.max_position_embeddings);
    const B = grid.rows;
    const G = grid.length - 1;
    const needsRef = objective.kind === "dpo" || (grpo !== undefined && grpo.klCoef !== 0);
    let refGrid: Float32Array | undefined;
    if (batch.refLogprobs) refGrid = onGrid(grid, batch.refLogprobs, "batch.refLogprobs");
    else if (needsRef) {
      refGrid = onGrid(
        grid,
        this.logprobsWith(this.reference, grid).map((r) => Array.from(r)),
        "refLogprobs",
      );
    }
    // GRPO's old policy (the proximal one under the decoupled objective), when the batch gives its log-probs
    let oldGrid: Float32Array | undefined;
    let behaviourGrid: Float32Array | undefined;
    if (grpo?.decoupled) {
      behaviourGrid = onGrid(grid, batch.oldLogprobs!, "batch.oldLogprobs");
      if (batch.proximalLogprobs) oldGrid = onGrid(grid, batch.proximalLogprobs, "batch.proximalLogprobs");
    } else if (grpo && batch.oldLogprobs) oldGrid = onGrid(grid, batch.oldLogprobs, "batch.oldLogprobs");

    const extraOut: Record<string, tf.Scalar> = {};
    const { value, grads } = tf.variableGrads(() => {
      const mask = tf.tensor2d(grid.mask, [B, G]);
      const refLogp = refGrid ? tf.tensor2d(refGrid, [B, G]) : undefined;
      const policy = this.policy();
      const { logp, entropy } = gridLogprobs(
        this.config,
        policy,
        this.rope,
        grid,
        grpo !== undefined || (objective.kind === "dpo" && (objective.entropyCoef ?? 0) !== 0),
        this.loraScale(),
      );
      let result: { loss: tf.Scalar; extra: Record<string, tf.Scalar> };
      if (objective.kind === "sft") result = sftLoss(logp, mask, totals.tokens);
      else if (objective.kind === "dpo") {
        result = dpoLoss(
          logp,
          refLogp!,
          mask,
          objective.beta ?? 0.1,
          objective.loss ?? "sigmoid",
          { entropyCoef: objective.entropyCoef, entropy, nllCoef: objective.nllCoef },
          { pairs: totals.rows / 2, chosenTokens: totals.chosenTokens, tokens: totals.tokens },
        );
      } else {
        // Without given log-probs the old (or proximal) policy is the one this single update starts from:
        // this very forward pass, held constant, so no second forward pass is needed.
        const oldLogp = oldGrid ? tf.tensor2d(oldGrid, [B, G]) : stopGradient(logp);
        result = grpoLoss(
          logp,
          oldLogp,
          tf.tensor2d(batch.advantages!, [B, 1]),
          mask,
          grpo!,
          {
            refLogp,
            entropy,
            behaviourWeight: behaviourGrid
              ? behaviourWeights(oldLogp, tf.tensor2d(behaviourGrid, [B, G]), grpo!.behaviourWeightCap)
              : undefined,
          },
          totals,
        );
      }
      for (const [k, v] of Object.entries(result.extra)) extraOut[k] = tf.keep(tf.clone(v)) as tf.Scalar;
      return result.loss;
    }, [...this.trainable().values()]);

    const named = new Map<string, tf.Tensor>();
    for (const [name, v] of this.trainable()) {
      const g = grads[v.name];
      if (g) named.set(name, g);
    }
    const loss = value.dataSync()[0];
    value.dispose();
    const extra: Record<string, number> = {};
    for (const [k, v] of Object.entries(extraOut)) {
      extra[k] = v.dataSync()[0];
      v.dispose();
    }
    return { loss, extra, grads: named };
  }

  /**
   * The whole batch's loss, figures and gradients without an update, gradients by HF weight name in the HF layout
   * (with LoRA, the adapters' as the engine holds them). For comparing engines.
   */
  batchGradients(
    batch: TrainBatch,
    objective: Objective,
  ): { loss: number; extra: Record<string, number>; grads: Map<string, NamedTensor> } {
    const grid = tokenGrid(batch, this.config.vocab_size, this.config.max_position_embeddings);
    const { loss, extra, grads } = this.shardGradients(batch, objective, batchTotals(grid), grid);
    const out = new Map<string, NamedTensor>();
    for (const [name, g] of grads) {
      out.set(
        name,
        this.lora ? { shape: [...g.shape], data: g.dataSync() as Float32Array } : toHfTensor(name, g),
      );
      g.dispose();
    }
    return { loss, extra, grads: out };
  }

  /** The policy in HF layout, by HF name (LoRA adapters merged). */
  exportTensors(): Map<string, NamedTensor> {
    const out = new Map<string, NamedTensor>();
    for (const [name, t] of this.merged()) {
      out.set(name, toHfTensor(name, t));
      t.dispose();
    }
    return out;
  }

  weights(): WeightSource {
    return { kind: "tensors", tensors: this.exportTensors() };
  }

  async save(dir: string): Promise<void> {
    await writeHfCheckpoint(dir, this.config, this.exportTensors(), { tokenizerFrom: this.tokenizerDir });
    const state = new Map<string, NamedTensor>();
    const put = (key: string, t: tf.Tensor) =>
      state.set(key, { shape: [...t.shape], data: t.dataSync() as Float32Array });
    const trainable = this.trainable();
    for (const [kind, moments] of [
      ["exp_avg", this.optimizer.exp_avg],
      ["exp_avg_sq", this.optimizer.exp_avg_sq],
    ] as const) {
      for (const [name, data] of moments)
        state.set(`${kind}.${name}`, { shape: [...trainable.get(name)!.shape], data });
    }
    for (const [name, t] of Object.entries(this.reference)) put(`reference.${name}`, t);
    for (const [name, t] of this.adapters) {
      put(`lora.${name}`, t);
      const base = name.replace(/\.lora_[AB]$/, "");
      if (!state.has(`lora_base.${base}`)) put(`lora_base.${base}`, this.params.get(base)!); // unmerged base
    }
    await writeSafetensors(join(dir, "optimizer.safetensors"), state);
    const trainerState: TrainerState = {
      step: this.optimizer.step,
      optimizer: this.optimizer.options,
      maxGradNorm: this.maxGradNorm,
      ...(this.lora ? { lora: this.lora } : {}),
    };
    await writeFile(join(dir, "trainer_state.json"), JSON.stringify(trainerState, null, 2));
    if (this.lora) await writePeftAdapter(join(dir, "adapter"), this.adapters, this.lora);
  }

  async load(dir: string): Promise<void> {
    const { config, tensors } = await readHfCheckpoint(dir);
    const keys = new Set([...Object.keys(this.config), ...Object.keys(config)]) as Set<keyof LlamaConfig>;
    for (const key of keys) {
      if (JSON.stringify(config[key]) !== JSON.stringify(this.config[key])) {
        throw new Error(
          `${dir}/config.json: ${key} is ${JSON.stringify(config[key])}, expected ${JSON.stringify(this.config[key])} (this trainer's architecture)`,
        );
      }
    }
    this.assignWeights(tensors);
    await this.loadOptimizer(dir);
  }

  private async loadOptimizer(dir: string): Promise<void> {
    let stateJson: TrainerState;
    try {
      stateJson = JSON.parse(await readFile(join(dir, "trainer_state.json"), "utf8"));
    } catch {
      return; // a plain model checkpoint: fresh optimizer
    }
    if ((stateJson as { engine?: string }).engine === "torch") {
      throw new CheckpointError(
        `${dir}/trainer_state.json: training state of the torch engine, whose optimizer layout this engine does not read; start from these weights with a fresh optimizer instead of resuming`,
        { file: `${dir}/trainer_state.json` },
      );
    }
    const state = await readSafetensors(join(dir, "optimizer.safetensors"));
    this.optimizer = new AdamW({ ...this.optimizer.options, ...stateJson.optimizer });
    this.optimizer.step = stateJson.step;
    if (stateJson.lora && !this.lora) this.addAdapters(stateJson.lora);
    for (const [key, t] of state) {
      const dot = key.indexOf(".");
      const kind = key.slice(0, dot);
      const name = key.slice(dot + 1);
      if (kind === "exp_avg" || kind === "exp_avg_sq") {
        this.optimizer[kind].set(name, Float32Array.from(t.data));
        continue;
      }
      const tensor = tf.tensor(t.data, t.shape);
      if (kind === "reference") {
        this.reference[name]?.dispose();
        this.reference[name] = tensor;
      } else {
        const target =
          kind === "lora"
            ? this.adapters.get(name)
            : kind === "lora_base"
              ? this.params.get(name)
              : undefined;
        if (!target)
          throw new CheckpointError(`${dir}/optimizer.safetensors: unexpected entry ${key}`, {
            file: `${dir}/optimizer.safetensors`,
            tensor: key,
          });
        target.assign(tensor);
        tensor.dispose();
      }
    }
    this.paramsVersion++;
    this.adaptersVersion++;
    this.referenceVersion++;
  }
}
