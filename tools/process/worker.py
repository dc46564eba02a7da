"""A Bazel persistent worker (JSON protocol) around a tool's ``main(argv) -> int``.

Bazel starts the tool once with ``--persistent_worker`` and sends it one JSON
WorkRequest per line on stdin (``arguments``: the action's command line, its
@flagfile expanded; ``requestId``); the tool answers each with one WorkResponse
line (``exitCode``, ``output``: what Bazel shows for the action). One
interpreter and its imports then serve every action of that mnemonic, instead
of a start per action (about 0.08 s each for the image tools here).

Each request runs in the environment the worker started with, plus the
client's settings of that build (the tool reads them from the volatile status
file its request names, tools/client_env.py), and what it prints is its
response's output.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import IO

FLAG = "--persistent_worker"
ENV = (
    "ROCM_PYTORCH_BAZEL_WORKER"  # set in a worker's environment (tools/process/daemon.py reads it)
)


def expand(argv: list[str]) -> list[str]:
    """``@file`` arguments replaced by the file's lines (Bazel's multiline param files)."""
    out: list[str] = []
    for arg in argv:
        if arg.startswith("@") and Path(arg[1:]).is_file():
            out += Path(arg[1:]).read_text(encoding="utf-8").splitlines()
        else:
            out.append(arg)
    return out


def handle(
    main: Callable[[list[str]], int], argv: list[str], base: dict[str, str]
) -> tuple[int, str]:
    """Run one request: (exit code, what it printed)."""
    os.environ.clear()
    os.environ.update(base)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            code = main(expand(argv))
        except SystemExit as e:  # argparse's errors and --help
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
        except Exception:
            traceback.print_exc()
            code = 1
    return code, buf.getvalue()


def serve(main: Callable[[list[str]], int], stdin: IO[str], stdout: IO[str]) -> int:
    """Answer WorkRequests from ``stdin`` until it closes, on ``stdout``."""
    base = dict(os.environ)
    for line in stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        code, output = handle(main, request.get("arguments", []), base)
        response = {"exitCode": code, "output": output, "requestId": request.get("requestId", 0)}
        stdout.write(json.dumps(response) + "\n")
        stdout.flush()
    return 0


def run(
    main: Callable[[list[str]], int],
    once: Callable[[list[str]], int] | None = None,
    argv: list[str] | None = None,
) -> int:
    """``main`` per request as a persistent worker when Bazel asks for one
    (``--persistent_worker``), else ``once`` (default ``main``) on ``argv``, its
    @flagfile expanded."""
    argv = sys.argv[1:] if argv is None else argv
    if FLAG not in argv:
        return (once or main)(expand(argv))
    # The protocol keeps the real stdin and stdout; file descriptor 0 becomes /dev/null
    # and 1 becomes stderr (the worker's log), so nothing a request starts can read a
    # request or write into a response.
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(2, 1)
    # A worker is a Bazel spawn that outlives its actions (tools/process/daemon.py): what it
    # starts for itself (a scoped engine) lives as long as it does.
    os.environ[ENV] = "1"
    # Bazel ends a worker with SIGTERM (an interrupted build, its shutdown): unwind, so
    # the request's cleanup runs and its child processes are killed (tools/imagebuild).
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return serve(main, requests, protocol)
    except Terminated:
        return 143


class Terminated(BaseException):
    """SIGTERM: not an answer to the request (as SystemExit is), the worker's end."""


def _terminate(*_: object) -> None:
    raise Terminated
