"""One request carried out on this process's engine: the methods of the protocol (../PROTOCOL.md), shared by the
worker process and the Ray actor that holds the engine for it."""

from collections.abc import Callable
from typing import Any

from .errors import WorkerError

IsCancelled = Callable[[Any, "str | None"], bool]
"""Whether a call (by its id), or one request of it (by the request's id), was cancelled."""
Emit = Callable[[Any, list], None]
"""Streams a `generate` call's progress: the tokens its rows sampled in one decoding step."""


def dispatch(state: dict[str, Any], method: str, params: dict[str, Any], is_cancelled: IsCancelled | None,
             call_id: Any, emit: Emit | None = None) -> Any:
    """Carries out one request on this process's engine; `is_cancelled(call_id, request_id)` tells a running
    generation which of its requests were cancelled, and `emit(call_id, events)` streams a `generate` that asked for
    it (`stream: true`)."""
    from .engine import TorchEngine
    from .sampling import generate

    if method == "init":
        state["engine"] = TorchEngine(params, state["parallel"])
        return state["engine"].info()
    engine = state.get("engine")
    if engine is None:
        raise WorkerError(f"{method}: the worker has no engine yet; call init first")
    if method == "info":
        return engine.info()
    if method == "logprobs":
        return engine.logprobs(params["batch"])
    if method == "step":
        return engine.step(params["batch"], params["objective"])
    if method == "gradients":
        return engine.gradients(params["batch"], params["objective"], params["path"])
    if method == "syncReference":
        return engine.sync_reference()
    if method == "save":
        return engine.save(params["dir"], weights_only=bool(params.get("weightsOnly")))
    if method == "load":
        return engine.load(params["dir"])
    if method == "setWeights":
        return engine.set_weights(int(params["version"]), params["dir"])
    if method == "generate":
        if not state["parallel"].leader:
            return None
        assert is_cancelled is not None  # the leader's channel always tells
        stream = (lambda events: emit(call_id, events)) if params.get("stream") and emit else None
        return generate(engine, params["requests"], lambda rid: is_cancelled(call_id, rid), stream)
    raise WorkerError(f"method: unknown method {method!r}")
