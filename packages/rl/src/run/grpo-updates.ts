import type { Objective, StepMetrics, TrainBatch, TrainEngine } from "@arc/core";

/**
 * `epochs` GRPO updates on one batch. With more than one, the policy the first update starts from is held as the old
 * policy (the proximal one under the decoupled objective), so every later update is clipped against it; behaviour
 * log-probs the batch already carries stay the old policy's outside the decoupled objective. The figures: the first
 * update's loss (before any update), the mean of the gradient norms and extras, the tokens of all updates.
 */
export async function grpoUpdates(
  train: TrainEngine,
  batch: TrainBatch,
  objective: Extract<Objective, { kind: "grpo" }>,
  epochs: number,
): Promise<StepMetrics> {
  if (epochs === 1) return train.step(batch, objective);
  const startLogprobs = async () => (await train.logprobs(batch)).map((row) => Array.from(row));
  const held: TrainBatch = objective.decoupled
    ? { ...batch, proximalLogprobs: await startLogprobs() }
    : batch.oldLogprobs
      ? batch
      : { ...batch, oldLogprobs: await startLogprobs() };
  const updates: StepMetrics[] = [];
  for (let epoch = 0; epoch < epochs; epoch++) updates.push(await train.step(held, objective));
  const mean = (pick: (m: StepMetrics) => number) => updates.reduce((sum, m) => sum + pick(m), 0) / epochs;
  const last = updates[epochs - 1];
  return {
    step: last.step,
    loss: updates[0].loss,
    gradNorm: mean((m) => m.gradNorm),
    learningRate: last.learningRate,
    tokens: updates.reduce((sum, m) => sum + m.tokens, 0),
    extra: Object.fromEntries(
      Object.keys(updates[0].extra).map((key) => [key, mean((m) => m.extra[key] ?? 0)]),
    ),
  };
}
