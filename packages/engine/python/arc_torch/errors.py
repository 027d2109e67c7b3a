"""Errors the worker reports to its caller by name (the `type` of a protocol error)."""


class WorkerError(Exception):
    """A request the worker cannot carry out; the message names the field or file at fault."""


class BatchError(WorkerError):
    """A batch whose rows or per-token fields do not fit together."""


class CheckpointError(WorkerError):
    """A checkpoint directory that cannot be read or does not fit this engine."""


class GrammarError(WorkerError):
    """A request's grammar over its bounds, or one that allows no output: that request fails, no other."""
