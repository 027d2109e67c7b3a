"""A fork server for torch workers: it imports torch, transformers and peft once, then forks a worker per request.

A worker started as `python -m arc_torch.worker` spends seconds importing before it can answer; a fork of this
process starts with all of that done. The parent (`torch-fork-server.ts`) speaks JSON lines on stdin/stdout:

    -> {"id": 1, "args": ["--ray-address", "auto"], "env": {...}, "stdio": "/tmp/x.io", "stderr": "/tmp/x.err"}
    <- {"id": 1, "pid": 4242}                  the fork started; it connects to both Unix sockets
    <- {"exit": 4242, "code": 0, "signal": null}   when that fork ended

A fork takes the environment it is given, connects to `stdio` (its stdin and stdout) and `stderr`, and runs the
worker's `main()` as `python -m arc_torch.worker` would. The server stays single-threaded (forking is only safe so),
and exits when its stdin closes.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import select
import signal
import socket
import sys
import traceback
from typing import Any


PRELOADED = (
    "torch",
    "safetensors.torch",
    "transformers",
    "transformers.models.llama.modeling_llama",
    "transformers.models.qwen2.modeling_qwen2",
    "peft",
    "arc_torch.engine",
    "arc_torch.worker",
)


def preload() -> None:
    """Imports what every worker needs before its first request, so that forks start with it. A module this Python
    lacks is left out: the fork that needs it fails on it as a worker started on its own would."""
    for name in PRELOADED:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def connect(path: str) -> socket.socket:
    """A connection to the parent's Unix socket at `path`."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(path)
    return conn


def run_worker(request: dict[str, Any]) -> int:
    """In the fork: takes the request's environment and streams, then runs the worker; returns its exit code."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(request.get("env") or {})
    stdio, stderr = connect(request["stdio"]), connect(request["stderr"])
    os.dup2(stdio.fileno(), 0)
    os.dup2(stdio.fileno(), 1)
    os.dup2(stderr.fileno(), 2)
    stdio.close()
    stderr.close()
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
    import torch

    torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS") or 1)))
    from . import worker

    sys.argv = ["python -m arc_torch.worker", *request.get("args", [])]
    try:
        worker.main()
        return 0
    except SystemExit as end:
        if end.code is None or isinstance(end.code, int):
            return end.code or 0
        print(end.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - the fork's last words go to its own stderr, as a crashed process's do
        traceback.print_exc()
        return 1


def fork(request: dict[str, Any], server_fds: list[int]) -> int:
    """Forks a worker for `request`; returns its pid (in the parent only: the fork exits when its worker ends). The
    fork closes `server_fds`, the server's own pipes, so that the parent sees the server end when it ends."""
    sys.stdout.flush()
    pid = os.fork()
    if pid != 0:
        return pid
    code = 1
    try:
        for fd in server_fds:
            os.close(fd)
        code = run_worker(request)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def reap(say: Any) -> None:
    """Reports every fork that has ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if os.WIFSIGNALED(status):
            say({"exit": pid, "code": None, "signal": signal.Signals(os.WTERMSIG(status)).name})
        else:
            say({"exit": pid, "code": os.waitstatus_to_exitcode(status), "signal": None})


def main() -> None:
    preload()
    out = os.fdopen(os.dup(1), "w", buffering=1)

    def say(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")

    # a fork's end wakes the loop below through this pipe, so exits are reported at once
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: os.write(wake_write, b"x"))
    say({"ready": True, "pid": os.getpid()})
    pending = b""
    while True:
        readable, _, _ = select.select([0, wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
            reap(say)
        if 0 not in readable:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            request = json.loads(line)
            try:
                say({"id": request["id"], "pid": fork(request, [out.fileno(), wake_read, wake_write])})
            except OSError as error:
                say({"id": request["id"], "error": str(error)})
    reap(say)


if __name__ == "__main__":
    main()
