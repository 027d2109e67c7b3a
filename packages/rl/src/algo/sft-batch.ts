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
