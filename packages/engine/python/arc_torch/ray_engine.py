"""The engine in an actor on a Ray cluster: the local worker keeps speaking the protocol and forwards each request
to the actor, which holds the model on the resources it asked Ray for (GPUs, CPUs). The `arc_torch` package travels
to the cluster with the actor (Ray's `py_modules`); checkpoint directories must be paths the actor's node can read
and write (the same machine, or shared storage).
"""

import logging
import os
import threading
from typing import Any

import ray
from ray.exceptions import RayTaskError

from .dispatch import dispatch

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


# a second thread takes `cancel` while a generation runs; ray's stubs do not type its actor classes
@ray.remote(max_concurrency=2)  # pyright: ignore[reportCallIssue]
class EngineActor:
    def __init__(self) -> None:
        from .distributed import DataParallel

        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        self.state = {"parallel": DataParallel()}
        self.cancelled = set()
        self.lock = threading.Lock()

    def dispatch(self, method: str, params: dict[str, Any], call_id: Any) -> Any:
        return dispatch(self.state, method, params, self.is_cancelled, call_id)

    def cancel(self, target: str) -> None:
        with self.lock:
            self.cancelled.add(target)

    def is_cancelled(self, call_id: Any, request_id: str | None) -> bool:
        with self.lock:
            return call_id in self.cancelled or (request_id is not None and f"{call_id}/{request_id}" in self.cancelled)

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()


class RayEngine:
    """The worker's side: connects to the cluster and starts one actor with the resources asked for."""

    def __init__(self, address: str, gpus: float, cpus: float) -> None:
        ray.init(address=address, runtime_env={"py_modules": [PACKAGE_DIR]}, logging_level=logging.ERROR,
                 log_to_driver=False)
        self.actor = EngineActor.options(num_gpus=gpus, num_cpus=cpus).remote()  # pyright: ignore[reportAttributeAccessIssue]

    def call(self, method: str, params: dict[str, Any], call_id: Any) -> Any:
        try:
            result: Any = ray.get(self.actor.dispatch.remote(method, params, call_id))
        except RayTaskError as error:
            raise error.cause from None
        if method in ("init", "info"):
            result = {**result, "rayNode": ray.get(self.actor.node.remote())}
        return result

    def cancel(self, target: str) -> None:
        self.actor.cancel.remote(target)

    def close(self) -> None:
        ray.kill(self.actor)
        ray.shutdown()
