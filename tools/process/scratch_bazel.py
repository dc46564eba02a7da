"""Host-script helpers for a Bazel server on a throwaway output base.

Shared by `.ci/remote_cache_check.py` and `bench/build_graph.py`, which run
from the repository root as plain scripts (`python3 .ci/...`) and put that
root on sys.path to import this module. Python 3.11, stdlib only.

- `ScratchBazel`: one Bazel server with its own output base; `run()` times one
  command (stdin closed, output captured, optional timeout: exit 124), and
  `shutdown()` stops the server, by its pid if `bazel shutdown` does not.
- `read_exec_log`: the spawns of a `--execution_log_json_file`.
- `Checks`: the PASS/FAIL lines of a CI script's checks and its summary line.
- `rmtree`: delete a tree that Bazel made read-only in places.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from tools import places

REPO = places.workspace()


class BazelRun(NamedTuple):
    """One timed Bazel command: exit code (124: timed out), output, wall seconds."""

    rc: int
    stdout: str
    stderr: str
    wall: float


class ScratchBazel:
    """One Bazel server on its own throwaway output base, run from the repo root."""

    def __init__(self, output_base: Path, timeout: float | None = None, cwd: Path = REPO) -> None:
        self.output_base = output_base
        self.timeout = timeout  # default per-command timeout in seconds (None: none)
        self.cwd = cwd
        self.calls = 0

    def command(self, *args: str) -> list[str]:
        return [
            "bazel",
            f"--output_base={self.output_base}",
            # a script killed hard must not leave a server behind for long
            "--max_idle_secs=600",
            *args,
        ]

    def run(
        self, *args: str, timeout: float | None = None, env: dict[str, str] | None = None
    ) -> BazelRun:
        """Run `bazel <args>` (with ``env``, default this process's); on a timeout
        (default: the instance's) exit code 124."""
        self.calls += 1
        timeout = self.timeout if timeout is None else timeout
        cmd = self.command(*args)
        start = time.monotonic()
        try:
            proc = subprocess.run(
                cmd,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
                env=env,
            )
        except subprocess.TimeoutExpired as e:
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else ""
            return BazelRun(124, "", f"{err}\ntimed out after {timeout}s: {' '.join(cmd)}", timeout)
        return BazelRun(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)

    def shutdown(self) -> None:
        if not self.calls or not self.output_base.exists():
            return
        try:
            subprocess.run(
                ["bazel", f"--output_base={self.output_base}", "shutdown"],
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=60,
                check=False,
            )
        except subprocess.TimeoutExpired:
            pass
        # If it did not go, end it by the pid it wrote (this server is ours).
        pid_file = self.output_base / "server" / "server.pid.txt"
        try:
            pid = int(pid_file.read_text().strip())
            os.kill(pid, signal.SIGKILL)
        except (OSError, ValueError):
            pass


class Checks:
    """A CI script's checks: ``@checks("name")`` runs the function at once and prints
    `PASS: name (Ns) detail` (its return value) or `FAIL: name: error` (any exception:
    one check failing never stops the others); ``summary`` is the last line."""

    def __init__(self, only: list[str] | None = None) -> None:
        self.results: list[tuple[str, bool, str]] = []
        # ``only``: run just the checks whose name holds one of these (`--only`)
        self.only = only or []
        self.left_out = 0

    def add(self, name: str, ok: bool, detail: str, seconds: float | None = None) -> None:
        self.results.append((name, ok, detail))
        took = f" ({seconds:.1f}s)" if seconds is not None else ":"
        print(f"PASS: {name}{took} {detail}" if ok else f"FAIL: {name}: {detail}", flush=True)

    def __call__(self, name: str):
        def wrap(fn):
            if self.only and not any(o in name for o in self.only):
                self.left_out += 1
                return fn
            start = time.monotonic()
            try:
                detail = fn() or ""
            except Exception as e:  # a failed check is reported, never raised
                self.add(name, False, str(e))
            else:
                self.add(name, True, detail, time.monotonic() - start)
            return fn

        return wrap

    def summary(self, what: str) -> tuple[str, bool]:
        """(`<what>: N passed, M failed`, whether none failed)."""
        passed = sum(ok for _, ok, _ in self.results)
        failed = len(self.results) - passed
        if self.only and not self.results:
            return (
                f"{what}: no check's name holds {' or '.join(self.only)}: 0 passed, 1 failed",
                False,
            )
        skipped = f" ({self.left_out} not selected by --only)" if self.left_out else ""
        return f"{what}{skipped}: {passed} passed, {failed} failed", failed == 0


def read_exec_log(path: Path) -> list[dict]:
    """The SpawnExec entries of a `--execution_log_json_file` (concatenated JSON).

    A missing file (Bazel stopped before writing it) has none.
    """
    text = path.read_text() if path.exists() else ""
    decoder = json.JSONDecoder()
    spawns, pos = [], 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return spawns
        obj, pos = decoder.raw_decode(text, pos)
        spawns.append(obj)


def descriptors_in(cquery_files: str, root: Path | str = ".") -> dict[str, dict]:
    """{file name: descriptor} of the image descriptors `bazel cquery --output=files`
    printed (``cquery_files``, paths relative to ``root``, the workspace): each image's
    ``<name>.json``, not its ``.spec.json``/``.build.json``/``.size.json``. Descriptors not built (a
    variant the --define values did not ask for) are left out."""
    out = {}
    for line in cquery_files.split():
        if line.endswith(".json") and not line.endswith(
            (".spec.json", ".build.json", ".size.json")
        ):
            path = Path(root, line)
            if path.exists():
                out[path.name] = json.loads(path.read_text())
    return out


def rmtree(path: Path) -> None:
    """Delete a tree that Bazel made read-only in places (nothing if it is gone)."""

    def retry(func, p, _exc):
        try:
            os.chmod(Path(p).parent, stat.S_IRWXU)
            os.chmod(p, stat.S_IRWXU)
        except OSError:
            pass
        func(p)

    if not path.exists():
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)
