"""Data parallelism under `torchrun`: rank 0 speaks the protocol and hands each command to every rank; each rank
takes its shard of a batch's rows, and their gradients are summed before the one update (every shard's loss
already divides by the whole batch's counts, so the sum is the whole batch's gradient)."""

import os

import torch
import torch.distributed as dist


class DataParallel:
    """This process's place among the ranks; a single process is rank 0 of 1."""

    def __init__(self):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if self.world > 1 and not dist.is_initialized():
            dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo")

    @property
    def leader(self) -> bool:
        return self.rank == 0

    def share(self, message):
        """Rank 0's `message`, on every rank."""
        if self.world == 1:
            return message
        box = [message]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def shard(self, rows: int, multiple: int) -> tuple:
        """This rank's rows [start, end) of a batch, split in whole groups of `multiple` rows (DPO pairs)."""
        groups = rows // multiple
        per, extra = divmod(groups, self.world)
        start = (self.rank * per + min(self.rank, extra)) * multiple
        end = start + (per + (1 if self.rank < extra else 0)) * multiple
        return start, end

    def sum_gradients(self, params: list) -> None:
        """Sums every rank's gradients in place, in one flat buffer per dtype (what DDP's buckets do after backward)."""
        if self.world == 1:
            return
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        by_dtype = {}
        for p in params:
            by_dtype.setdefault(p.grad.dtype, []).append(p.grad)
        for grads in by_dtype.values():
            flat = torch.cat([g.reshape(-1) for g in grads])
            dist.all_reduce(flat)
            offset = 0
            for g in grads:
                g.copy_(flat[offset : offset + g.numel()].view_as(g))
                offset += g.numel()

    def sum_figures(self, figures: dict) -> dict:
        """Sums a dict of floats over the ranks (keys may differ: a rank with no rows reports none)."""
        if self.world == 1:
            return figures
        gathered = [None] * self.world
        dist.all_gather_object(gathered, figures)
        total = {}
        for part in gathered:
            for key, value in part.items():
                total[key] = total.get(key, 0.0) + value
        return total

    def close(self) -> None:
        if self.world > 1 and dist.is_initialized():
            dist.destroy_process_group()
