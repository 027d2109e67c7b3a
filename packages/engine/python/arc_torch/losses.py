"""The objectives of `TrainEngine.step`, the same formulas as the embedded engine's (train/losses/*.ts).

Every mean divides by the whole batch's counts (`totals`), so the losses and figures of a batch's micro-batches
and data-parallel shards add up to the whole batch's.
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def sft_loss(logp: Tensor, mask: Tensor, totals: dict) -> tuple[Tensor, dict]:
    """Masked negative log-likelihood, averaged over the batch's loss tokens."""
    loss = -(logp * mask).sum() / max(totals["tokens"], 1.0)
    return loss, {"nll": loss}


def dpo_loss(logp: Tensor, ref_logp: Tensor, mask: Tensor, totals: dict, beta: float = 0.1, variant: str = "sigmoid",
             entropy_coef: float = 0.0, entropy: Tensor | None = None, nll_coef: float = 0.0) -> tuple[Tensor, dict]:
    """DPO (Rafailov et al. 2023, eq. 7) or IPO (Azar et al. 2023, eq. 17) over (chosen, rejected) row pairs.

    h = (log pi(c) - log pi(r)) - (log ref(c) - log ref(r)), summed over each response's tokens; plus nll_coef x
    the chosen rows' mean token NLL (RPO) and minus entropy_coef x the mean token entropy of both responses.
    """
    pairs = max(totals["rows"] / 2, 1.0)
    seq = (logp * mask).sum(dim=1).view(-1, 2)  # [P, 2] policy log-prob of (chosen, rejected)
    ref_seq = (ref_logp * mask).sum(dim=1).view(-1, 2)
    ratio = seq - ref_seq
    chosen, rejected = ratio[:, 0], ratio[:, 1]
    h = chosen - rejected
    per_pair = F.softplus(-beta * h) if variant == "sigmoid" else (h - 1 / (2 * beta)) ** 2
    loss = per_pair.sum() / pairs
    extra = {}
    if nll_coef != 0:
        chosen_logp = (logp * mask).view(-1, 2, logp.shape[1])[:, 0]
        nll = -chosen_logp.sum() / max(totals["chosenTokens"], 1.0)
        extra["chosenNll"] = nll
        loss = loss + nll_coef * nll
    if entropy_coef != 0:
        if entropy is None:
            raise ValueError("entropy: DPO with entropyCoef needs the per-token entropy")
        mean_entropy = (entropy * mask).sum() / max(totals["tokens"], 1.0)
        extra["entropy"] = mean_entropy
        loss = loss - entropy_coef * mean_entropy
    extra["margin"] = (beta * h).sum() / pairs
    extra["rewardAccuracy"] = (h > 0).float().sum() / pairs
    extra["chosenReward"] = (beta * chosen).sum() / pairs
    extra["rejectedReward"] = (beta * rejected).sum() / pairs
    return loss, extra


def grpo_loss(logp: Tensor, old_logp: Tensor, advantages: Tensor, mask: Tensor, totals: dict, options: dict,
              ref_logp: Tensor | None = None, entropy: Tensor | None = None,
              behaviour_weight: Tensor | None = None) -> tuple[Tensor, dict]:
    """GRPO (Shao et al. 2024, eq. 3) per token, aggregated by `token`, `sequence` or `dr-grpo`:

    -min(r A, clip(r, 1 - eps, 1 + eps) A) + kl_coef k3(KL) - entropy_coef H, r = exp(logp - old_logp);
    under the decoupled objective `old_logp` is the proximal policy and each surrogate is scaled by the constant
    `behaviour_weight` (pi_prox / pi_behaviour, AReaL eq. 5).
    """
    eps = options["clipEpsilon"]
    ratio = torch.exp(logp - old_logp)
    adv = advantages.view(-1, 1)
    surrogate = torch.minimum(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv)
    per_token = -(surrogate * behaviour_weight if behaviour_weight is not None else surrogate)
    tokens = max(totals["tokens"], 1.0)
    extra = {}

    def masked(x):
        return (x * mask).sum() / tokens

    if ref_logp is not None:
        d = ref_logp - logp
        kl = torch.exp(d) - d - 1
        if options["klCoef"] != 0:
            per_token = per_token + options["klCoef"] * kl
        extra["kl"] = masked(kl)
    if entropy is not None:
        if options["entropyCoef"] != 0:
            per_token = per_token - options["entropyCoef"] * entropy
        extra["entropy"] = masked(entropy)
    weighted = per_token * mask
    aggregation = options["aggregation"]
    if aggregation == "token":
        loss = weighted.sum() / tokens
    elif aggregation == "sequence":
        per_row = weighted.sum(dim=1) / torch.clamp(mask.sum(dim=1), min=1.0)
        loss = per_row.sum() / totals["rows"]
    else:
        loss = weighted.sum() / totals["cells"]
    outside = ((ratio > 1 + eps) | (ratio < 1 - eps)).float()
    extra["clipFraction"] = masked(outside)
    extra["ratio"] = masked(ratio)
    if behaviour_weight is not None:
        extra["behaviourWeight"] = masked(behaviour_weight)
    return loss, extra
