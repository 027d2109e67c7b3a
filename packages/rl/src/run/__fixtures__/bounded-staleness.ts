import assert from "node:assert/strict";
import type { StepRecord } from "../run-types.ts";

/** Every step trained on rollouts at most one version old, some exactly one, and its generator step says so. */
export function assertStalenessUpToOne(steps: StepRecord[]): void {
  for (const r of steps) {
    assert.ok(r.staleness >= 0 && r.staleness <= 1, `step ${r.step}: staleness ${r.staleness}`);
    assert.equal(r.generatorStep, r.step - 1 - r.staleness);
  }
  assert.ok(
    steps.some((r) => r.staleness === 1),
    "no step trained on rollouts one version old",
  );
}
