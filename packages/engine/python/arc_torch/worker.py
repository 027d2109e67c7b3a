"""The worker process: one engine, driven over JSON lines on stdin/stdout (the protocol is in ../PROTOCOL.md).

    python -m arc_torch.worker                               # one process
    torchrun --nproc_per_node 2 -m arc_torch.worker          # data-parallel: rank 0 speaks the protocol
    python -m arc_torch.worker --ray-address HOST:PORT --ray-gpus 1   # the engine in an actor on a Ray cluster

Requests carry token ids, never weights. Anything a library prints goes to stderr; stdout carries replies only.
"""

import argparse
import json
import os
import queue
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

from .dispatch import dispatch
from .distributed import DataParallel
from .errors import WorkerError


class Channel:
    """Rank 0's side of the protocol: a reader thread queues requests (and marks cancelled generations at
    once, while the main thread is busy), the main thread writes one reply line per request."""

    def __init__(self, on_cancel: Callable[[str], None] | None = None) -> None:
        self.on_cancel = on_cancel
        self.out = os.fdopen(os.dup(1), "w", buffering=1)
        sys.stdout = sys.stderr
        self.requests: queue.Queue[dict] = queue.Queue()
        self.cancelled: set[str] = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError as error:
                self.reply({"id": None, "error": {"type": "ProtocolError", "message": f"not JSON: {error}"}})
                continue
            if message.get("method") == "cancel":
                target = message.get("params", {}).get("target")
                with self.lock:
                    self.cancelled.add(target)
                if self.on_cancel:
                    self.on_cancel(target)
                self.reply({"id": message.get("id"), "result": None})
                continue
            self.requests.put(message)
        self.requests.put({"method": "shutdown"})

    def reply(self, message: dict) -> None:
        with self.lock:
            self.out.write(json.dumps(message, allow_nan=False) + "\n")

    def emit(self, call_id: Any, events: list) -> None:
        """A progress line of a streamed `generate`: the tokens its rows sampled in one decoding step."""
        self.reply({"id": call_id, "tokens": events})

    def is_cancelled(self, call_id: Any, request_id: str | None) -> bool:
        with self.lock:
            return call_id in self.cancelled or (request_id is not None and f"{call_id}/{request_id}" in self.cancelled)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m arc_torch.worker")
    parser.add_argument("--ray-address", help="run the engine in an actor on this Ray cluster (host:port or auto)")
    parser.add_argument("--ray-gpus", type=float, default=0, help="GPUs the actor asks Ray for")
    parser.add_argument("--ray-cpus", type=float, default=1, help="CPUs the actor asks Ray for")
    args = parser.parse_args()
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    parallel = DataParallel()
    if parallel.world == 1:
        # the parent ends this worker by closing stdin; a SIGTERM sent to the whole process tree (a Ray job being
        # stopped) is the parent's to act on: it checkpoints through this worker first
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    remote = None
    if args.ray_address:
        if parallel.world > 1:
            raise SystemExit("--ray-address: a Ray actor trains as one process; leave out torchrun")
        from .ray_engine import RayEngine

        remote = RayEngine(args.ray_address, gpus=args.ray_gpus, cpus=args.ray_cpus)
    channel = Channel(on_cancel=remote.cancel if remote else None) if parallel.leader else None
    state = {"parallel": parallel}
    while True:
        message = channel.requests.get() if channel else None
        message = parallel.share(message)
        method, call_id = message.get("method"), message.get("id")
        if method == "shutdown":
            break
        try:
            params = message.get("params") or {}
            if remote:
                result = remote.call(method, params, call_id)
            else:
                result = dispatch(state, method, params, channel.is_cancelled if channel else None, call_id,
                                  channel.emit if channel else None)
            reply = {"id": call_id, "result": result}
        except (WorkerError, ValueError, TypeError, KeyError) as error:
            kind = type(error).__name__
            text = f"missing field {error}" if isinstance(error, KeyError) else str(error)
            reply = {"id": call_id, "error": {"type": kind, "message": text}}
        except Exception as error:  # noqa: BLE001 - reported to the caller with its trace, then the worker goes on
            traceback.print_exc()
            reply = {"id": call_id, "error": {"type": type(error).__name__, "message": str(error)}}
        if channel:
            channel.reply(reply)
    if remote:
        remote.close()
    parallel.close()


if __name__ == "__main__":
    main()
