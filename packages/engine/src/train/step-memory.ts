import type { LlamaConfig } from "../model/llama-config.ts";

/** The wasm backend's heap cannot grow past 4 GiB (32-bit addresses); a step that needs more aborts it for good. */
export const WASM_HEAP_LIMIT_BYTES = 4 * 2 ** 30;

/**
 * Bytes of wasm heap one training step takes on a grid of `rows` × `length` tokens: per token, ~166 floats
 * per hidden unit and layer (activations kept for the backward pass), ~29 per vocabulary entry (logits,
 * log-softmax, their gradients) and ~6 per attention head, layer and key position (scores, probabilities,
 * their gradients). Fitted on the heap high-water mark of `tiny` and `small` steps (within 3% from 800 to
 * 11,000 tokens); weights and optimizer state are small beside it.
 */
export function estimateTrainStepBytes(config: LlamaConfig, rows: number, length: number): number {
  const layers = config.num_hidden_layers;
  const floatsPerToken =
    166 * layers * config.hidden_size +
    29 * config.vocab_size +
    6 * layers * config.num_attention_heads * length;
  return 4 * rows * length * floatsPerToken;
}

/**
 * Throws a RangeError naming the batch's shape, what it would need and the most rows that fit, when a
 * training step on it would not fit in `limitBytes` of heap.
 */
export function assertTrainStepFits(
  config: LlamaConfig,
  rows: number,
  length: number,
  limitBytes = WASM_HEAP_LIMIT_BYTES,
): void {
  const needed = estimateTrainStepBytes(config, rows, length);
  if (needed <= limitBytes) return;
  const fitting = rowsThatFit(config, length, limitBytes);
  const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
  throw new RangeError(
    `batch: ${rows} rows × ${length} tokens would need about ${gib(needed)} GiB for one training step, more than the wasm backend's ${gib(limitBytes)} GiB heap (it would abort); use at most ${fitting} rows of this length, or shorter rows`,
  );
}

/** The most rows of `length` tokens one training step fits in `limitBytes` of heap (0 when not even one does). */
export function rowsThatFit(config: LlamaConfig, length: number, limitBytes = WASM_HEAP_LIMIT_BYTES): number {
  return Math.floor(limitBytes / estimateTrainStepBytes(config, 1, length));
}

/**
 * Share of the wasm heap one micro-batch's forward and backward pass may take when the trainer splits a batch: the
 * rest holds the weights, Adam's moments, the gradients summed so far and the estimate's error (within 10%).
 */
export const MICRO_BATCH_HEAP_SHARE = 0.75;
