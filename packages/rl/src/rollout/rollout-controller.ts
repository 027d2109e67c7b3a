import type { Task } from "@arc/core";
import { mayStartRollout } from "../algo/staleness-gate.ts";
import type { ScoredGroup } from "./scored-group.ts";

/** Options of the rollout controller. */
export interface RolloutControllerOptions {
  /** Rollouts (prompts) the trainer consumes per optimizer step. */
  batchSize: number;
  maxStaleness: number;
  maxConcurrentRollouts: number;
  /** The prompt of rollout number `index` (the run's data order). */
  taskOf: (index: number) => Task;
  /** Hands one rollout to the generator; its group comes back through `complete`. */
  submit: (index: number, task: Task) => void;
  /** The policy version at the start (a resumed run's step); rollouts are numbered from `version * batchSize`. */
  version?: number;
}

/**
 * AReaLite's rollout controller: keeps up to `maxConcurrentRollouts` rollouts in flight while the trainer
 * trains, starting one only while the staleness gate allows it (`maxStaleness = 0` is synchronous), and
 * hands the trainer each step's groups in data order whatever order they finish in.
 */
export class RolloutController {
  private version: number;
  private started: number;
  private running = 0;
  private readonly done = new Map<number, ScoredGroup | null>();
  private wake: (() => void) | undefined;
  private failure: Error | undefined;

  constructor(private readonly options: RolloutControllerOptions) {
    this.version = options.version ?? 0;
    this.started = this.version * options.batchSize;
  }

  /** Rollouts in flight now. */
  inFlight(): number {
    return this.running;
  }

  /** The policy version the generator holds. */
  getVersion(): number {
    return this.version;
  }

  /** Starts every rollout the gate allows now. */
  pump(): void {
    while (
      mayStartRollout({
        currentVersion: this.version,
        started: this.started,
        batchSize: this.options.batchSize,
        maxStaleness: this.options.maxStaleness,
        running: this.running,
        maxConcurrentRollouts: this.options.maxConcurrentRollouts,
      })
    ) {
      const index = this.started++;
      this.running++;
      this.options.submit(index, this.options.taskOf(index));
    }
  }

  /** A rollout finished (`null`: rejected). */
  complete(index: number, group: ScoredGroup | null): void {
    this.running--;
    this.done.set(index, group);
    this.wake?.();
    this.pump();
  }

  /** The generator broke (its thread crashed or reported an error): every waiting and later `batch` rejects with `error`. */
  fail(error: Error): void {
    this.failure ??= error;
    this.wake?.();
  }

  /** The generator now holds policy version `version`: later rollouts may start. */
  setVersion(version: number): void {
    this.version = version;
    this.pump();
  }

  /** The groups of optimizer step `step` (1-based), once all of its rollouts have finished. */
  async batch(step: number, signal?: AbortSignal): Promise<ScoredGroup[]> {
    const first = (step - 1) * this.options.batchSize;
    const indices = Array.from({ length: this.options.batchSize }, (_, k) => first + k);
    this.pump();
    while (!indices.every((i) => this.done.has(i))) {
      if (this.failure) throw this.failure;
      if (signal?.aborted) throw signal.reason ?? new Error("aborted");
      await new Promise<void>((resolve) => {
        // one listener per wait, removed on waking: a run waits thousands of times on the same signal
        const onAbort = () => resolve();
        this.wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    const groups = indices
      .map((i) => this.done.get(i))
      .filter((g): g is ScoredGroup => g !== null && g !== undefined);
    for (const i of indices) this.done.delete(i);
    return groups;
  }
}
