import type { TrainBatch } from "@arc/core";
import { batchAt } from "../data/prompt-order.ts";
import type { ChatExample } from "../data/sft-examples.ts";
import type { RenderExample } from "../run/engine-factory.ts";

/**
 * The SFT warm-up batch of optimizer step `step` (1-based): masked NLL on the assistant reply only
 * (the prompt is not in `outputTokens`, so it carries no loss). Data order is `batchAt`'s seeded shuffle.
 */
export function sftBatch(
  examples: readonly ChatExample[],
  render: RenderExample,
  step: number,
  batchSize: number,
  seed: number,
): TrainBatch {
  const rows = batchAt(step, batchSize, examples.length, seed).map((i) =>
    render(examples[i].messages, examples[i].reply, examples[i].tools),
  );
  return { promptTokens: rows.map((r) => r.promptTokens), outputTokens: rows.map((r) => r.outputTokens) };
}

/** When guided examples (prompts that carry a teacher's guidance) are trained. */
export interface GuidedSchedule {
  seed: number;
  /** The first step that may be a guided batch. */
  guidedFrom: number;
  /** 0: guided examples are mixed into every batch; k ≥ 2: every k-th step from `guidedFrom` is a guided batch. */
  guidedEvery: number;
}

/** Each examples list split into its plain and its guided examples, computed once. */
const splits = new WeakMap<readonly ChatExample[], { plain: ChatExample[]; guided: ChatExample[] }>();

/**
 * The SFT batch of step `step` under a guided schedule: with `guidedEvery` ≥ 2, guided examples wait until
 * `guidedFrom`, then every `guidedEvery`-th step is a half-size batch of guided examples only, and the other steps
 * take plain examples in their own seeded order (a batch mixing both pads every row to the longer guided prompts).
 */
export function scheduledSftBatch(
  examples: readonly ChatExample[],
  render: RenderExample,
  step: number,
  batchSize: number,
  schedule: GuidedSchedule,
): TrainBatch {
  if (schedule.guidedEvery === 0) return sftBatch(examples, render, step, batchSize, schedule.seed);
  let split = splits.get(examples);
  if (!split) {
    split = { plain: examples.filter((e) => !e.guided), guided: examples.filter((e) => e.guided) };
    splits.set(examples, split);
  }
  const { plain, guided } = split;
  /** Guided batches taken up to and including step `s`. */
  const guidedSteps = (s: number) =>
    guided.length === 0 || s < schedule.guidedFrom
      ? 0
      : Math.floor((s - schedule.guidedFrom) / schedule.guidedEvery) + 1;
  return guidedSteps(step) > guidedSteps(step - 1)
    ? sftBatch(guided, render, guidedSteps(step), Math.max(1, Math.floor(batchSize / 2)), schedule.seed)
    : sftBatch(plain, render, step - guidedSteps(step), batchSize, schedule.seed);
}
