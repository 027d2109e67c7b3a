"""AdamW with the embedded engine's schedule: linear warm-up, then the peak or a cosine decay (train/adamw.ts)."""

import math

import torch

ADAMW_DEFAULTS = {
    "learningRate": 1e-3,
    "warmupSteps": 0,
    "decaySteps": 0,
    "minLearningRate": 0.0,
    "beta1": 0.9,
    "beta2": 0.999,
    "epsilon": 1e-8,
    "weightDecay": 0.0,
}


def learning_rate(options: dict, step: int) -> float:
    """Learning rate of the update that follows `step` updates."""
    peak, warmup = options["learningRate"], options["warmupSteps"]
    decay, floor = options["decaySteps"], options["minLearningRate"]
    if step < warmup:
        return peak * (step + 1) / warmup
    if not decay > 0:
        return peak
    progress = min(step - warmup, decay) / decay
    return floor + (peak - floor) * (1 + math.cos(math.pi * progress)) / 2


def make_adamw(params: list, options: dict) -> torch.optim.AdamW:
    """torch's AdamW over named parameters; decoupled weight decay on matrices only, not norms or biases."""
    matrices = [p for p in params if p.ndim >= 2]
    others = [p for p in params if p.ndim < 2]
    groups = [{"params": matrices, "weight_decay": options["weightDecay"]}, {"params": others, "weight_decay": 0.0}]
    return torch.optim.AdamW(
        [g for g in groups if g["params"]],
        lr=options["learningRate"],
        betas=(options["beta1"], options["beta2"]),
        eps=options["epsilon"],
        fused=bool(params) and params[0].is_cuda,
    )
