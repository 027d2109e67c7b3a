"""A TokenBatch laid out for one forward pass, exactly as the embedded engine lays it out (token-grid.ts).

Rows of prompt + output are right-padded to length L. Position t of the [B, L-1] next-token grid holds the
log-prob of token t+1, so output token j of row b sits at t = prompt_length_b + j - 1. Per-token inputs
(mask, old/ref log-probs) go on the same grid, so every loss is a masked reduction. Causal attention never lets a
real token see the padding after it, so the padding needs no attention mask.
"""

from dataclasses import dataclass

import torch

from .errors import BatchError

PAD_ID = 0


@dataclass
class TokenGrid:
    tokens: torch.Tensor  # [B, L] input ids
    targets: torch.Tensor  # [B, L-1] id of the next token at each position
    mask: torch.Tensor  # [B, L-1] 1 where an output token counts in the loss
    starts: list  # grid index of each row's first output token
    output_lengths: list

    @property
    def rows(self) -> int:
        return self.tokens.shape[0]

    @property
    def length(self) -> int:
        return self.tokens.shape[1]


def token_grid(batch: dict, vocab_size: int, max_length: int) -> TokenGrid:
    """Lays out a batch; raises BatchError naming the row and field when lengths disagree or a row is empty."""
    prompts = batch.get("promptTokens")
    outputs = batch.get("outputTokens")
    masks = batch.get("lossMask")
    if not isinstance(prompts, list) or len(prompts) == 0:
        raise BatchError("batch.promptTokens: expected at least one row, got none")
    rows = len(prompts)
    if not isinstance(outputs, list) or len(outputs) != rows:
        got = len(outputs) if isinstance(outputs, list) else "none"
        raise BatchError(f"batch.outputTokens: expected {rows} rows (one per prompt), got {got}")
    length = 0
    for b in range(rows):
        if len(prompts[b]) == 0:
            raise BatchError(f"batch.promptTokens[{b}]: expected at least one token, got none")
        if masks is not None and len(masks[b]) != len(outputs[b]):
            raise BatchError(
                f"batch.lossMask[{b}]: expected {len(outputs[b])} entries (one per output token), got {len(masks[b])}"
            )
        for t in (*prompts[b], *outputs[b]):
            if not isinstance(t, int) or isinstance(t, bool) or t < 0 or t >= vocab_size:
                raise BatchError(f"batch row {b}: expected token ids in [0, {vocab_size}), got {t}")
        length = max(length, len(prompts[b]) + len(outputs[b]))
    if length > max_length:
        raise BatchError(f"batch: a row has {length} tokens, more than the model's context of {max_length}")
    length = max(length, 2)
    tokens = torch.full((rows, length), PAD_ID, dtype=torch.long)
    targets = torch.full((rows, length - 1), PAD_ID, dtype=torch.long)
    mask = torch.zeros((rows, length - 1), dtype=torch.float32)
    starts = []
    for b in range(rows):
        seq = [*prompts[b], *outputs[b]]
        tokens[b, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        if len(seq) > 1:
            targets[b, : len(seq) - 1] = torch.tensor(seq[1:], dtype=torch.long)
        start = len(prompts[b]) - 1
        starts.append(start)
        n = len(outputs[b])
        if n:
            row_mask = masks[b] if masks is not None else [1.0] * n
            mask[b, start : start + n] = torch.tensor(row_mask, dtype=torch.float32)
    return TokenGrid(tokens, targets, mask, starts, [len(o) for o in outputs])


def on_grid(grid: TokenGrid, values: list, field: str) -> torch.Tensor:
    """Places per-output-token values (old/ref log-probs) on the grid; `field` names them in errors."""
    if not isinstance(values, list) or len(values) != grid.rows:
        got = len(values) if isinstance(values, list) else "none"
        raise BatchError(f"{field}: expected {grid.rows} rows, got {got}")
    out = torch.zeros((grid.rows, grid.length - 1), dtype=torch.float32)
    for b, row in enumerate(values):
        if len(row) != grid.output_lengths[b]:
            raise BatchError(
                f"{field}[{b}]: expected {grid.output_lengths[b]} values (one per output token), got {len(row)}"
            )
        if row:
            out[b, grid.starts[b] : grid.starts[b] + len(row)] = torch.tensor(row, dtype=torch.float32)
    return out


def off_grid(grid: TokenGrid, values: torch.Tensor) -> list:
    """Each row's output-token values read back off a [B, L-1] grid, as lists of floats."""
    data = values.detach().float().cpu()
    return [data[b, s : s + n].tolist() for b, (s, n) in enumerate(zip(grid.starts, grid.output_lengths))]


def batch_totals(grid: TokenGrid) -> dict:
    """The whole batch's counts, which every micro-batch's and shard's loss divides by."""
    per_row = grid.mask.sum(dim=1)
    return {
        "rows": grid.rows,
        "tokens": float(per_row.sum()),
        "chosenTokens": float(per_row[0::2].sum()),
        "cells": grid.rows * (grid.length - 1),
    }


ROW_FIELDS = ("promptTokens", "outputTokens", "lossMask", "advantages", "oldLogprobs", "refLogprobs", "proximalLogprobs")


def take_rows(batch: dict, rows: list[int]) -> dict:
    """The given rows of a batch, in that order, with every per-row field taken alike."""
    return {key: [batch[key][i] for i in rows] for key in ROW_FIELDS if batch.get(key) is not None}


def length_groups(lengths: list[int], spread: float = 2.0) -> list[list[int]]:
    """Row indices grouped by length, longest first; a group ends before a row shorter than 1/`spread` of its first,
    so each forward pass pads its rows to about their own length rather than to the batch's longest."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    groups: list[list[int]] = []
    for i in order:
        if groups and lengths[i] * spread >= lengths[groups[-1][0]]:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def slice_rows(batch: dict, start: int, end: int) -> dict:
    """Rows [start, end) of a batch, with every per-row field sliced alike."""
    out = {}
    for key in ROW_FIELDS:
        if batch.get(key) is not None:
            out[key] = batch[key][start:end]
    return out
