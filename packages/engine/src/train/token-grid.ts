import type { TokenBatch } from "@arc/core";
import { specialId } from "../tokenizer/byte-tokenizer.ts";

/**
 * A TokenBatch laid out for one forward pass: rows of prompt+output, right-padded to length L.
 * Position t of the [B, L-1] "next-token grid" holds the log-prob of token t+1, so output token j of
 * row b sits at t = promptLength_b + j - 1. Per-token inputs (mask, old/ref log-probs) are placed on
 * the same grid, so losses are plain masked reductions.
 */
export interface TokenGrid {
  rows: number;
  /** Padded sequence length L. */
  length: number;
  /** [B * L] input ids. */
  tokens: Int32Array;
  /** [B * (L-1)] id of the next token at each grid position. */
  targets: Int32Array;
  /** [B * (L-1)] 1 where an output token counts in the loss. */
  mask: Float32Array;
  /** Grid index of each row's first output token. */
  starts: number[];
  /** Number of output tokens per row. */
  outputLengths: number[];
}

const PAD = specialId("<|pad|>");

/** Lays out a batch; throws naming the row and field when lengths disagree or a row is empty. */
export function tokenGrid(batch: TokenBatch, vocabSize: number, maxLength: number): TokenGrid {
  const B = batch.promptTokens.length;
  if (B === 0) throw new TypeError("batch.promptTokens: expected at least one row, got none");
  if (batch.outputTokens.length !== B) {
    throw new TypeError(
      `batch.outputTokens: expected ${B} rows (one per prompt), got ${batch.outputTokens.length}`,
    );
  }
  let L = 0;
  for (let b = 0; b < B; b++) {
    const p = batch.promptTokens[b].length;
    if (p === 0) throw new TypeError(`batch.promptTokens[${b}]: expected at least one token, got none`);
    const m = batch.lossMask?.[b];
    if (m && m.length !== batch.outputTokens[b].length) {
      throw new TypeError(
        `batch.lossMask[${b}]: expected ${batch.outputTokens[b].length} entries (one per output token), got ${m.length}`,
      );
    }
    for (const t of [...batch.promptTokens[b], ...batch.outputTokens[b]]) {
      if (!Number.isInteger(t) || t < 0 || t >= vocabSize)
        throw new TypeError(`batch row ${b}: expected token ids in [0, ${vocabSize}), got ${t}`);
    }
    L = Math.max(L, p + batch.outputTokens[b].length);
  }
  if (L > maxLength)
    throw new TypeError(`batch: a row has ${L} tokens, more than the model's context of ${maxLength}`);
  L = Math.max(L, 2);
  const tokens = new Int32Array(B * L).fill(PAD);
  const targets = new Int32Array(B * (L - 1)).fill(PAD);
  const mask = new Float32Array(B * (L - 1));
  const starts: number[] = [];
  for (let b = 0; b < B; b++) {
    const seq = [...batch.promptTokens[b], ...batch.outputTokens[b]];
    tokens.set(seq, b * L);
    for (let t = 0; t + 1 < seq.length; t++) targets[b * (L - 1) + t] = seq[t + 1];
    const start = batch.promptTokens[b].length - 1;
    starts.push(start);
    batch.outputTokens[b].forEach((_, j) => {
      mask[b * (L - 1) + start + j] = batch.lossMask?.[b]?.[j] ?? 1;
    });
  }
  return {
    rows: B,
    length: L,
    tokens,
    targets,
    mask,
    starts,
    outputLengths: batch.outputTokens.map((o) => o.length),
  };
}

/** Places per-output-token values (old/ref log-probs) on the grid; `field` names them in errors. */
export function onGrid(grid: TokenGrid, values: number[][], field: string): Float32Array {
  if (values.length !== grid.rows)
    throw new TypeError(`${field}: expected ${grid.rows} rows, got ${values.length}`);
  const out = new Float32Array(grid.rows * (grid.length - 1));
  values.forEach((row, b) => {
    if (row.length !== grid.outputLengths[b]) {
      throw new TypeError(
        `${field}[${b}]: expected ${grid.outputLengths[b]} values (one per output token), got ${row.length}`,
      );
    }
    out.set(row, b * (grid.length - 1) + grid.starts[b]);
  });
  return out;
}

/** Reads each row's output-token values back off a [B, L-1] grid. */
export function offGrid(grid: TokenGrid, data: Float32Array): Float32Array[] {
  return grid.starts.map((start, b) => {
    const from = b * (grid.length - 1) + start;
    return data.slice(from, from + grid.outputLengths[b]);
  });
}
