"""Helpers of the engine tests: isolated state dirs, the CLI in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tools import engine
from tools.engine import state

ROOT = Path(engine.__file__).resolve().parents[2]  # where `tools` is importable from


def short_dir(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))


def isolate(monkeypatch, root: Path) -> None:
    monkeypatch.setenv(state.DIR_ENV, str(root / "engine"))
    monkeypatch.setenv(state.HOST_SOCKET_ENV, str(root / "no-host-engine.sock"))
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.delenv("DOCKER_CONFIG", raising=False)


@dataclass
class Result:
    code: int
    out: str
    err: str


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """`python3 -m tools.engine ARGS` in a child process (the environment given, or ours)."""
    environ = dict(os.environ if env is None else env)
    environ["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run(
        [sys.executable, "-m", "tools.engine", *args],
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
