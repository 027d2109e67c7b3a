"""Data parallelism under `torchrun`: rank 0 speaks the protocol and hands each command to every rank; each rank
takes its shard of a batch's rows through torch's DistributedDataParallel, whose gradient all-reduce sums the ranks'
gradients before the one update (every shard's loss already divides by the whole batch's counts, so the sum is the
whole batch's gradient)."""

import contextlib
import os
from typing import Any

import torch
import torch.distributed as dist


def _sum_hook(_state: object, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:  # pyright: ignore[reportPrivateImportUsage]
    """DDP's all-reduce of one gradient bucket, summing where DDP's own hook averages (DDP checks that `bucket` is
    annotated as its GradBucket)."""
    work = dist.all_reduce(bucket.buffer(), async_op=True)
    assert work is not None  # async_op=True always hands back its work
    return work.get_future().then(lambda done: done.value()[0])


class DataParallel:
    """This process's place among the ranks; a single process is rank 0 of 1."""

    def __init__(self) -> None:
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if self.world > 1 and not dist.is_initialized():
            # collectives go by their tensors' device: the control messages and a CPU engine's gradients over
            # gloo, a GPU engine's over NCCL, so a recipe with `device: cpu` trains on a machine with GPUs too
            backend = "cpu:gloo,cuda:nccl" if torch.cuda.is_available() else "gloo"
            dist.init_process_group(backend=backend)

    @property
    def leader(self) -> bool:
        return self.rank == 0

    def share(self, message: Any) -> Any:
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

    def wrap(self, model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """The module a training forward goes through: `model` itself alone, else DDP over it, summing gradients."""
        if self.world == 1:
            return model
        from torch.nn.parallel import DistributedDataParallel

        ddp = DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None, broadcast_buffers=False
        )
        ddp.register_comm_hook(None, _sum_hook)
        return ddp

    def no_sync(self, module: Any) -> contextlib.AbstractContextManager:
        """A context in which backward keeps gradients local (every micro-batch but a step's last)."""
        return module.no_sync() if self.world > 1 else contextlib.nullcontext()

    def sum_figures(self, figures: dict) -> dict:
        """Sums a dict of floats over the ranks (keys may differ: a rank with no rows reports none)."""
        if self.world == 1:
            return figures
        gathered: list[dict] = [{} for _ in range(self.world)]
        dist.all_gather_object(gathered, figures)
        total: dict = {}
        for part in gathered:
            for key, value in part.items():
                total[key] = total.get(key, 0.0) + value
        return total

    def close(self) -> None:
        if self.world > 1 and dist.is_initialized():
            dist.destroy_process_group()
