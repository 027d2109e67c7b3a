import { Worker } from "node:worker_threads";
import type { Objective, TrainBatch } from "@arc/core";
import type { LlamaConfig } from "../model/llama-config.ts";
import type { LoraOptions } from "./lora.ts";

/** One tensor crossing threads, by name (engine layout for weights, HF layout for the initial checkpoint). */
export interface WireTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** The whole batch's counts every shard's losses divide by, so that shards' gradients add up to the batch's. */
export interface BatchTotals {
  rows: number;
  /** Loss tokens (the mask's sum). */
  tokens: number;
  /** Loss tokens of the even rows: DPO's chosen responses. */
  chosenTokens: number;
  /** Rows x next-token grid length: the `dr-grpo` constant. */
  cells: number;
}

/** What one shard of a step gives back: its share of the loss and figures, and its summed gradients. */
export interface ShardGradients {
  loss: number;
  extra: Record<string, number>;
  grads: WireTensor[];
}

/** One part of what a worker computes gradients with, by the version its owner bumps whenever it changes. */
export interface VersionedTensors {
  version: number;
  /** The part's tensors, read only when the workers need them. */
  tensors: () => WireTensor[];
}

/** Bytes of tensors sent to all workers so far, by part: data-parallel training's traffic between threads. */
export interface WorkerTraffic {
  params: number;
  adapters: number;
  reference: number;
}

/** Trainer thread → gradient worker. */
export type ToGradientWorker =
  | {
      type: "init";
      config: LlamaConfig;
      tensors: WireTensor[];
      lora?: LoraOptions;
      microBatchRows?: number;
    }
  | { type: "params"; tensors: WireTensor[] }
  | { type: "adapters"; tensors: WireTensor[] }
  | { type: "reference"; tensors: WireTensor[] }
  | { type: "gradients"; id: number; batch: TrainBatch; objective: Objective; totals: BatchTotals };

/** Gradient worker → trainer thread. */
export type FromGradientWorker =
  | { type: "ready" }
  | { type: "gradients"; id: number; shard: ShardGradients }
  | { type: "error"; id?: number; message: string };

/**
 * Row ranges [start, end) that split `rows` rows into at most `parts` contiguous shards of nearly equal size, each
 * a multiple of `multiple` rows (DPO's chosen/rejected pairs stay together); fewer shards when there are too few rows.
 */
export function shardRows(rows: number, multiple: number, parts: number): [number, number][] {
  const units = Math.floor(rows / multiple);
  const shards = Math.max(1, Math.min(parts, units));
  const out: [number, number][] = [];
  let start = 0;
  for (let i = 0; i < shards; i++) {
    const end = i === shards - 1 ? rows : start + Math.round(units / shards) * multiple;
    out.push([start, end]);
    start = end;
  }
  return out;
}

interface Pending {
  resolve: (shard: ShardGradients) => void;
  reject: (error: Error) => void;
}

/**
 * The trainer thread's side of data-parallel training: worker threads, each with its own embedded engine, that
 * compute the gradients of their shard of every step's rows while the trainer thread computes its own. Before a
 * step each worker is sent the base weights, the LoRA adapters and the reference model, each only if it changed
 * since the worker last saw it (with LoRA the frozen base goes once); the optimizer update stays on the trainer thread.
 */
export class GradientWorkers {
  private readonly workers: Worker[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;
  private readonly sentVersions = { params: -1, adapters: -1, reference: -1 };
  /** Bytes sent to the workers so far, by part. */
  readonly traffic: WorkerTraffic = { params: 0, adapters: 0, reference: 0 };

  private constructor(count: number) {
    this.workers = Array.from({ length: count }, () => {
      const worker = new Worker(new URL("./gradient-worker-entry.mjs", import.meta.url));
      worker.unref();
      return worker;
    });
  }

  /** Starts `count` workers on `init`'s model and waits until each has built its engine. */
  static async start(
    count: number,
    init: Extract<ToGradientWorker, { type: "init" }>,
  ): Promise<GradientWorkers> {
    const pool = new GradientWorkers(count);
    await Promise.all(pool.workers.map((worker) => pool.listen(worker, init)));
    return pool;
  }

  /** Resolves when `worker` is ready; from then on routes its replies and failures. */
  private listen(worker: Worker, init: ToGradientWorker): Promise<void> {
    return new Promise((ready, failed) => {
      const fail = (error: Error) => {
        this.failure ??= error;
        for (const p of this.pending.values()) p.reject(this.failure);
        this.pending.clear();
        failed(this.failure);
      };
      worker.on("message", (message: FromGradientWorker) => {
        if (message.type === "ready") ready();
        else if (message.type === "gradients") {
          this.pending.get(message.id)?.resolve(message.shard);
          this.pending.delete(message.id);
        } else if (message.id !== undefined && this.pending.has(message.id)) {
          this.pending.get(message.id)?.reject(new Error(`gradient worker: ${message.message}`));
          this.pending.delete(message.id);
        } else fail(new Error(`gradient worker: ${message.message}`));
      });
      worker.on("error", fail);
      worker.on("exit", (code) => fail(new Error(`gradient worker exited (code ${code})`)));
      worker.postMessage(init);
    });
  }

  /** Workers besides the trainer thread. */
  get size(): number {
    return this.workers.length;
  }

  /** Sends every worker each part of the policy (and the reference model) whose version differs from what they hold. */
  sync(parts: Record<keyof WorkerTraffic, VersionedTensors>): void {
    for (const type of ["params", "adapters", "reference"] as const) {
      const { version, tensors } = parts[type];
      if (version === this.sentVersions[type]) continue;
      const message = { type, tensors: tensors() } satisfies ToGradientWorker;
      for (const worker of this.workers) worker.postMessage(message);
      this.sentVersions[type] = version;
      this.traffic[type] += this.workers.length * message.tensors.reduce((a, t) => a + t.data.byteLength, 0);
    }
  }

  /** The gradients of each shard, shard i on worker i. */
  gradients(shards: TrainBatch[], objective: Objective, totals: BatchTotals): Promise<ShardGradients[]> {
    if (shards.length > this.workers.length)
      throw new RangeError(`shards: ${shards.length} for ${this.workers.length} gradient workers`);
    return Promise.all(
      shards.map(
        (batch, i) =>
          new Promise<ShardGradients>((resolve, reject) => {
            if (this.failure) return reject(this.failure);
            const id = this.nextId++;
            this.pending.set(id, { resolve, reject });
            this.workers[i].postMessage({
              type: "gradients",
              id,
              batch,
              objective,
              totals,
            } satisfies ToGradientWorker);
          }),
      ),
    );
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    this.failure ??= new Error("gradient workers closed");
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}
