import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import type { Task, WeightSource } from "@arc/core";
import type { WireTensor } from "@arc/engine";
import { batchAt } from "../data/index.ts";
import { loadedFamilyModules } from "../families/index.ts";
import { RolloutController } from "../rollout/rollout-controller.ts";
import { type RolloutBatch, type RolloutSource, rolloutBatch } from "../rollout/rollout-source.ts";
import { rolloutSeed } from "../rollout/sample-groups.ts";
import type { AsyncSourceFactory } from "../run/run-training.ts";
import type { FromWorker, ToWorker } from "./rollout-messages.ts";

/** How busy each thread was: event-loop utilisation of the worker and the trainer, and CPU seconds of the process. */
export interface ThreadUsage {
  workerUtilization: number;
  /** Seconds the rollout worker was busy (loading its engine, generating, applying weights). */
  workerBusyS: number;
  trainerUtilization: number;
  /** Process CPU seconds (all threads) per wall second over the source's life: ~2 means both cores busy. */
  cpuPerWall: number;
  /** Seconds the trainer waited for rollouts. */
  trainerWaitS: number;
}

/**
 * Rollouts on a separate thread (AReaLite): a worker owning its own embedded InferenceEngine generates
 * while the trainer trains, gated by `maxStaleness`; new policy weights are sent by version as
 * transferred buffers after every optimizer step. A resumed async run restarts generation from the
 * checkpoint's policy (the interleaving of versions is timing-dependent, so only sync runs resume bit-exactly).
 */
export class AsyncRolloutSource implements RolloutSource {
  private readonly worker: Worker;
  private readonly controller: RolloutController;
  private readonly ready: Promise<void>;
  private failure: Error | undefined;
  private version: number;
  private readonly started = { wall: performance.now(), cpu: process.cpuUsage() };
  private waitMs = 0;
  private readonly trainerElu = performance.eventLoopUtilization();
  /** Usage as it stood when the source closed: a terminated worker reports no utilisation. */
  private finalUsage: ThreadUsage | undefined;

  private constructor(args: Parameters<AsyncSourceFactory>[0]) {
    const { recipe, generatorDir, generatorStep, data } = args;
    const t = recipe.trainer;
    if (t.algorithm !== "grpo") throw new Error(`asynchronous rollouts serve GRPO runs, got ${t.algorithm}`);
    this.version = generatorStep;
    this.worker = new Worker(new URL("./rollout-worker-entry.mjs", import.meta.url));
    const perStep = t.promptsPerStep;
    const taskOf = (index: number): Task => {
      const step = Math.floor(index / perStep) + 1;
      return data.prompts[batchAt(step, perStep, data.prompts.length, recipe.data.seed)[index % perStep]];
    };
    this.controller = new RolloutController({
      batchSize: perStep,
      maxStaleness: t.maxStaleness,
      maxConcurrentRollouts: t.maxConcurrentRollouts,
      taskOf,
      version: generatorStep,
      submit: (index, task) =>
        this.send({ type: "rollout", index, task, seed: rolloutSeed(t.seed, task, index) }),
    });
    this.ready = new Promise((resolve, reject) => {
      const fail = (error: Error) => {
        this.failure ??= error;
        this.controller.fail(this.failure);
        reject(this.failure);
      };
      this.worker.on("message", (message: FromWorker) => {
        if (message.type === "ready") resolve();
        else if (message.type === "group") this.controller.complete(message.index, message.group);
        else if (message.type === "error") fail(new Error(`rollout worker: ${message.message}`));
      });
      this.worker.on("error", fail);
      this.worker.on("exit", (code) => fail(new Error(`rollout worker exited (code ${code})`)));
    });
    this.ready.catch(() => {});
    this.send({
      type: "init",
      modelDir: generatorDir,
      version: generatorStep,
      trainer: t,
      reward: recipe.reward,
      familyModules: loadedFamilyModules(),
    });
  }

  /** Starts the worker and waits until its engine has loaded. */
  static create: AsyncSourceFactory = async (args) => {
    const source = new AsyncRolloutSource(args);
    await source.ready;
    source.controller.pump();
    return source;
  };

  private send(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker.postMessage(message, transfer);
  }

  async next(step: number, _tasks: Task[], signal?: AbortSignal): Promise<RolloutBatch> {
    if (this.failure) throw this.failure;
    const began = performance.now();
    const groups = await this.controller.batch(step, signal);
    this.waitMs += performance.now() - began;
    if (this.failure) throw this.failure;
    return rolloutBatch(groups, this.version);
  }

  async afterStep(step: number, policy: () => WeightSource | Promise<WeightSource>): Promise<void> {
    const weights = await policy();
    if (weights.kind !== "tensors")
      throw new TypeError(`policy weights: expected tensors, got a ${weights.kind}`);
    const tensors: WireTensor[] = [];
    for (const [name, t] of weights.tensors) tensors.push({ name, shape: t.shape, data: t.data.slice() });
    this.send(
      { type: "weights", version: step, tensors },
      tensors.map((t) => t.data.buffer as ArrayBuffer),
    );
    this.version = step;
    this.controller.setVersion(step);
  }

  generatorStep(): number {
    return this.version;
  }

  generatorWeights(): WeightSource | undefined {
    return undefined;
  }

  /** Thread usage so far, or over the source's whole life once closed (for benchmarks: are both cores working?). */
  usage(): ThreadUsage {
    if (this.finalUsage) return this.finalUsage;
    const wall = (performance.now() - this.started.wall) / 1000;
    const cpu = process.cpuUsage(this.started.cpu);
    const worker = this.worker.performance.eventLoopUtilization();
    return {
      workerUtilization: worker.utilization,
      workerBusyS: worker.active / 1000,
      trainerUtilization: performance.eventLoopUtilization(this.trainerElu).utilization,
      cpuPerWall: (cpu.user + cpu.system) / 1e6 / wall,
      trainerWaitS: this.waitMs / 1000,
    };
  }

  async close(): Promise<void> {
    this.finalUsage ??= this.usage();
    await this.worker.terminate();
  }
}

/** The AsyncSourceFactory that `startRun`/`resumeRun` take for `trainer.asyncRollouts: true`. */
export const asyncRolloutSource: AsyncSourceFactory = AsyncRolloutSource.create;
