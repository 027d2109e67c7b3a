import type { InferenceEngine, TrainEngine } from "@arc/core";
import type { Recipe } from "../recipe/index.ts";
import type { StepRecord } from "./run-types.ts";
import type { RunSubject } from "./strategies/run-subject.ts";

/** A held-out evaluation as a step's record carries it. */
export interface EvalFields {
  evalAccuracy: number;
  evalFailureRate: number;
  /** Seconds the evaluation took. */
  evalS: number;
  /** The subject's own figures, which go into the record's `extra`. */
  evalExtra: Record<string, number>;
}

/** True when step `step` is judged: every `evalEvery` steps from `evalFrom` on, and the last step. */
export function evalDue(trainer: Recipe["trainer"], step: number): boolean {
  const from = trainer.evalFrom ?? trainer.evalEvery;
  return (step % trainer.evalEvery === 0 && step >= from) || step === trainer.steps;
}

/** The held-out evaluations of a run: its subject judging the policy on an engine of its own. */
export class HeldOutEvaluation {
  /** The failure rate of the latest evaluation, a resumed run's from its records. */
  lastFailureRate: number | undefined;

  /** `engine` is undefined when the run has no held-out tasks; then every evaluation is skipped. */
  constructor(
    private readonly engine: InferenceEngine | undefined,
    private readonly train: TrainEngine,
    private readonly subject: RunSubject,
    records: readonly StepRecord[],
    private readonly signal?: AbortSignal,
  ) {
    this.lastFailureRate = [...records]
      .reverse()
      .find((r) => r.evalFailureRate !== undefined)?.evalFailureRate;
  }

  /** Judges the policy after step `step` (0: the starting model); undefined when the run has no held-out tasks. */
  async after(step: number): Promise<EvalFields | undefined> {
    if (!this.engine) return undefined;
    const began = performance.now();
    if (step > 0) await this.engine.setWeights(step, await this.train.weights());
    const result = await this.subject.evaluate(this.engine, this.signal);
    this.lastFailureRate = result.evalFailureRate;
    return {
      evalAccuracy: result.evalAccuracy,
      evalFailureRate: result.evalFailureRate,
      evalS: (performance.now() - began) / 1000,
      evalExtra: result.extra,
    };
  }

  async close(): Promise<void> {
    await this.engine?.close?.();
  }
}
