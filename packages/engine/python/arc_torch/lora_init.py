"""LoRA's A matrices drawn as the embedded engine draws them (train/lora.ts `initAdapter`), so both engines start a
LoRA run from the same adapters and train alike step for step.

The embedded engine fills adapted weight number i (layers in order, the targets in the order given within a layer)
with A [in, rank] uniform in +-1/sqrt(in), PEFT's Kaiming-uniform bound, row by row from mulberry32(seed * 7919 + i).
B stays zero, as PEFT leaves it, so training still starts exactly at the base model.
"""

from typing import Any

import numpy as np
import torch

MASK = np.uint64(0xFFFFFFFF)


def mulberry32_uniforms(seeds: list[int], count: int) -> np.ndarray:
    """[len(seeds), count] uniforms in [0, 1), row r the first `count` draws of mulberry32(seeds[r]) (model/llama.ts);
    the generators advance side by side, one vector operation per draw."""
    a = np.array([s & 0xFFFFFFFF for s in seeds], dtype=np.uint64)
    out = np.empty((len(seeds), count), dtype=np.float64)

    def imul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return (x * y) & MASK

    for k in range(count):
        a = (a + np.uint64(0x6D2B79F5)) & MASK
        t = imul(a ^ (a >> np.uint64(15)), a | np.uint64(1))
        t = t ^ ((t + imul(t ^ (t >> np.uint64(7)), t | np.uint64(61))) & MASK)
        out[:, k] = (t ^ (t >> np.uint64(14))) / 4294967296.0
    return out


def draw_like_embedded(layers: list[Any], rank: int, seed: int) -> None:
    """Sets each LoRA layer's A (peft's lora_A, [rank, in]) to the embedded engine's draws for weight number i = its
    place in `layers`, which must follow the embedded engine's order."""
    fan_ins = [layer.in_features for layer in layers]
    draws = mulberry32_uniforms([seed * 7919 + i for i in range(len(layers))], max(fan_ins) * rank)
    with torch.no_grad():
        for i, (layer, fan_in) in enumerate(zip(layers, fan_ins, strict=True)):
            bound = 1 / np.sqrt(fan_in)
            a = ((2 * draws[i, : fan_in * rank] - 1) * bound).astype(np.float32).reshape(fan_in, rank)
            layer.lora_A["default"].weight.copy_(torch.from_numpy(a.T.copy()))
